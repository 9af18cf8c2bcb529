// The ownership algebra of seed 004 (DESIGN.md, "Tiles and ownership"): an immutable bijection
// between a tile's logical indices and (thread, register slot).
//
// Physical coordinates pack thread bits first, then register-slot bits:
//   physical = thread + register * thread_count.
// bit_order[logical_bit] names the physical bit placed at that logical bit position; xor_mask
// is then applied to the logical index. identity(size, elements_per_thread) is the striped
// default: thread t owns t + r * thread_count for slots r in [0, elements_per_thread).
//
// A replicated layout spans more threads than size / elements_per_thread: the thread bits that
// no logical bit names are replica bits, and the threads that differ only in them hold the
// same elements (seed 004's broadcast ownership: a row statistic held by every thread of its
// row, as an axis reduction leaves it). Its canonical owner of an element is the replica with
// those bits 0; only that one writes the element anywhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace metile::ir {

class ThreadLayout {
 public:
  // UserError unless bit_order is a permutation of 0..n-1 (n <= 30), xor_mask < 2^n and
  // elements_per_thread is a power of two no larger than 2^n. With thread_count above
  // 2^n / elements_per_thread (a power of two), bit_order names distinct physical bits of the
  // larger space, every register bit among them, and the thread bits it leaves out replicate.
  explicit ThreadLayout(std::vector<int> bit_order, int64_t xor_mask = 0,
                        int64_t elements_per_thread = 1, int64_t thread_count = 0);

  // size: a power of two; elements_per_thread: a power of two dividing size.
  static ThreadLayout identity(int64_t size, int64_t elements_per_thread = 1);

  int64_t size() const { return int64_t{1} << bit_order_.size(); }
  int64_t thread_count() const { return thread_count_; }
  int64_t elements_per_thread() const { return elements_per_thread_; }
  const std::vector<int>& bit_order() const { return bit_order_; }
  int64_t xor_mask() const { return xor_mask_; }
  bool is_identity() const;
  // The thread bits that name no logical bit (0 for a bijection).
  int64_t replica_bits() const { return replica_bits_; }
  bool is_replicated() const { return replica_bits_ != 0; }

  // The logical index held by (thread, reg); UserError when either is out of range.
  int64_t logical_index(int64_t thread, int64_t reg = 0) const;
  // The thread (its canonical replica) and register slot holding a logical index; UserError
  // when out of range.
  int64_t owner(int64_t index) const;
  int64_t register_of(int64_t index) const;

  // "identity(1024 elements, 256 threads, 4 per thread)" or
  // "ThreadLayout((1, 0, 2), xor 0, 1 per thread)".
  std::string str() const;

  bool operator==(const ThreadLayout&) const = default;

 private:
  int64_t physical(int64_t index) const;  // the packed physical coordinate of a logical index

  std::vector<int> bit_order_;
  int64_t xor_mask_;
  int64_t elements_per_thread_;
  int64_t thread_count_;
  int thread_bits_;
  int64_t replica_bits_ = 0;
};

}  // namespace metile::ir
