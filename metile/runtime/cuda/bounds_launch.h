// A launch of a kernel with recorded bounds checks (METILE_DEBUG=bounds, KernelABI::
// bounds_checks; codegen/cuda/cuda_bounds.h) on the cuda device: each buffer argument's extent
// in bytes goes to the kernel as a hidden argument, with a zeroed fault record; after the
// kernel the launch waits, reads the record and raises the first fault as a KernelFaultError
// in the host emulator's words (kernel, threadgroup, thread, buffer, byte offset, source line).
// TMA copies cannot be checked in the kernel (the copy engine reads what a tensor map covers),
// so each map is checked against its buffer's extent before the launch.
#pragma once

#include <span>
#include <vector>

#include "metile/codegen/cuda/cuda_bounds.h"
#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/cuda/cuda_device.h"
#include "metile/runtime/kernel_args.h"
#include "metile/runtime/kernel_errors.h"

namespace metile::runtime::cuda {

// The hidden extents, one per buffer parameter in params order: each buffer's size in bytes
// (wrapped caller memory: the bytes it was wrapped with, for a torch tensor from its first
// element to the end of its storage).
std::vector<unsigned long long> buffer_extents(const codegen::KernelABI& abi,
                                               std::span<const BoundArg> bound);

// The error of a written fault record of a launch whose buffers had `extents` (in params order,
// as buffer_extents gives them; an index past them reads as an unknown extent).
KernelFaultError bounds_fault(const codegen::cuda_bounds::FaultRecord& record,
                              const codegen::KernelABI& abi,
                              std::span<const unsigned long long> extents);

// KernelFaultError, before the launch, for a tensor map whose rows reach past the end of its
// buffer (`extents` in params order, as buffer_extents gives them).
void check_tensor_maps_fit(const codegen::KernelABI& abi, std::span<const BoundArg> bound,
                           std::span<const unsigned long long> extents);

// One launch's fault record in device memory on `gpu`: allocated and zeroed (synchronously,
// so before the kernel is queued), read after the kernel, freed with this object. Its
// context must be current while it lives (ScopedContext).
class FaultRecordMemory {
 public:
  explicit FaultRecordMemory(const Gpu& gpu);
  ~FaultRecordMemory();
  FaultRecordMemory(const FaultRecordMemory&) = delete;
  FaultRecordMemory& operator=(const FaultRecordMemory&) = delete;

  // The kernel argument: a pointer to the record's address.
  CUdeviceptr* argument() { return &address_; }
  // The record as the kernel left it; call once the kernel finished.
  codegen::cuda_bounds::FaultRecord read(const std::string& kernel) const;

 private:
  const Gpu& gpu_;
  CUdeviceptr address_ = 0;
};

}  // namespace metile::runtime::cuda
