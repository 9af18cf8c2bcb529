// The kernel's one threadgroup block. User allocations (shared_alloc) get their own 16-byte
// aligned regions at the start; then private scratch: register reductions' (see
// allocate_reduction_slot) and the dot operand tails', regions nothing else touches, so they
// need no release barrier; then the shared compiler
// scratch (other reductions, exchanges), where every use shares one region, because each use
// ends with a release barrier before the next one can begin. A software pipeline's slots are
// scratch too, pinned at its start for the loop's lifetime: the uses inside the loop go above
// them, and the uses after its release barrier start at the bottom again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/lower/lower.h"

namespace metile::lower {

class ThreadgroupAllocator {
 public:
  // user_bytes: the total of every shared_alloc, each rounded up to 16 bytes; private scratch
  // starts there, and shared scratch private_bytes later.
  ThreadgroupAllocator(int64_t user_bytes, int64_t private_bytes)
      : private_end_(user_bytes), scratch_offset_(user_bytes + private_bytes) {}

  // A user region, in program order; returns its byte offset.
  int64_t allocate_user(const std::string& purpose, ir::DType dtype, int64_t elements);
  // A dedicated region (a dot's operand tails); returns its byte offset.
  int64_t allocate_private(const std::string& purpose, ir::DType dtype, int64_t elements);
  // A register reduction's partials, in the next of two private slots, taken in turn: a top-level
  // reduction's publication barrier lies between the previous one's reads and the one after's
  // writes, so a slot is free again two reductions later and no release barrier is needed.
  // Without the reuse every reduction kept its own slot (more than 2,048 of 16 bytes overran
  // the host's 32 KB). Returns its byte offset.
  int64_t allocate_reduction_slot(const std::string& purpose, ir::DType dtype, int64_t elements);
  static constexpr int64_t kReductionSlots = 2;
  // Scratch that is dead after its release barrier, at an offset that is a multiple of
  // `alignment` bytes where one is given (a power of two: wgmma's swizzled tiles take 1024);
  // returns its byte offset.
  int64_t allocate_scratch(const std::string& purpose, ir::DType dtype, int64_t elements,
                           int64_t alignment = 1);
  // Scratch that stays live until unpin_scratch() (a pipeline's slots), at an offset that is a
  // multiple of `alignment` bytes (a power of two, at least 16); returns the offset.
  int64_t pin_scratch(const std::string& purpose, ir::DType dtype, int64_t elements,
                      int64_t alignment = 16);
  void unpin_scratch() { pinned_bytes_ = 0; }
  // The bytes available to scratch within `capacity` bytes of threadgroup memory.
  int64_t scratch_capacity(int64_t capacity) const { return capacity - scratch_offset_; }

  // The block size, rounded up to 16 bytes (0 when nothing was allocated).
  int64_t total_bytes() const;
  const std::vector<Allocation>& allocations() const { return allocations_; }

  static int64_t round_up(int64_t bytes) { return (bytes + 15) / 16 * 16; }
  // The bytes of every shared_alloc of a Tile IR kernel, each rounded up: the user's
  // regions are laid out before any compiler scratch.
  static int64_t user_bytes(const ir::Kernel& tile);

 private:
  int64_t user_end_ = 0;
  int64_t private_end_;
  int64_t scratch_offset_;
  int64_t scratch_bytes_ = 0;
  int64_t pinned_bytes_ = 0;
  std::vector<Allocation> allocations_;
  std::vector<Allocation> reduction_slots_;  // at most kReductionSlots
  int64_t reductions_ = 0;
};

}  // namespace metile::lower
