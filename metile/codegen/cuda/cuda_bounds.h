// METILE_DEBUG=bounds in CUDA (docs/cuda.md, "Bounds checks"): before each device access the
// emitted kernel compares the accessed bytes with the extent of the buffer its pointer comes
// from (a hidden parameter per buffer, filled in by the runtime); a failed compare records the
// launch's first fault in a small device buffer, the fault record, and the access goes to the
// record's scratch bytes instead, so the kernel never touches memory outside its buffers. The
// runtime reads the record after the launch (runtime/cuda/bounds_launch.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "metile/codegen/prelude.h"

namespace metile::codegen::cuda_bounds {

// The fault record as the host reads it: the device's metile_fault_record (cuda_bounds.cc's
// prelude) without its scratch bytes, field for field.
struct FaultRecord {
  uint32_t state = 0;  // kNoFault, kBeingWritten or kWritten
  uint32_t param = 0;  // the buffer parameter the faulting access was checked against
  int64_t byte_offset = 0;
  uint32_t bytes = 0;     // the access's size
  uint32_t is_write = 0;  // 1 for a store or an atomic
  int32_t line = 0;       // the emitted source's line of the check (KernelABI::source_of_line)
  uint32_t thread = 0;    // threadIdx.x (blocks are 1-D)
  uint32_t block[3] = {0, 0, 0};
  uint32_t reserved = 0;
};
static_assert(sizeof(FaultRecord) == 48 && offsetof(FaultRecord, byte_offset) == 8 &&
                  offsetof(FaultRecord, block) == 32,
              "the layout of metile_fault_record in cuda_bounds.cc");
inline constexpr uint32_t kNoFault = 0, kBeingWritten = 1, kWritten = 2;
// The scratch bytes after the record: the largest access a failed check redirects there (a
// 16-byte vector, cp.async's 16 bytes, a matrix row of 8 elements at stride 0) fits.
inline constexpr size_t kScratchBytes = 64;
inline constexpr size_t kRecordBytes = sizeof(FaultRecord) + kScratchBytes;

// The hidden parameter's name and type: a pointer to the record.
inline constexpr const char* kRecordName = "metile_fault";
inline constexpr const char* kRecordType = "metile_fault_record*";

// Adds metile_fault_record and the check's helpers to the prelude.
void declare(Prelude& prelude);
// Whether the `bytes` at p lie inside the `extent` bytes at base.
std::string in_bounds(const std::string& p, const std::string& base, const std::string& extent,
                      int64_t bytes);
// Records a failed access of `bytes` at p, checked against buffer parameter `param` at base
// (the launch's first fault wins; later ones leave the record as it is).
std::string record_fault(size_t param, const std::string& p, const std::string& base, int64_t bytes,
                         bool write);
// The record's scratch bytes as a `pointer_type`: where a failed access goes instead.
std::string scratch(const std::string& pointer_type);

}  // namespace metile::codegen::cuda_bounds
