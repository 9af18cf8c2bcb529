#include "metile/lower/threadgroup_allocator.h"

#include <algorithm>

#include "metile/support/errors.h"

namespace metile::lower {

int64_t ThreadgroupAllocator::allocate_user(const std::string& purpose, ir::DType dtype,
                                            int64_t elements) {
  const int64_t bytes = elements * ir::dtype_bytes(dtype);
  const int64_t offset = user_end_;
  user_end_ += round_up(bytes);
  METILE_ASSERT(user_end_ <= scratch_offset_, "shared_alloc sizes were not all counted up front");
  allocations_.push_back({purpose, offset, bytes, dtype, elements});
  return offset;
}

int64_t ThreadgroupAllocator::allocate_private(const std::string& purpose, ir::DType dtype,
                                               int64_t elements) {
  const int64_t bytes = elements * ir::dtype_bytes(dtype);
  const int64_t offset = private_end_;
  private_end_ += round_up(bytes);
  METILE_ASSERT(private_end_ <= scratch_offset_,
                "register reductions were not all counted up front");
  allocations_.push_back({purpose, offset, bytes, dtype, elements});
  return offset;
}

int64_t ThreadgroupAllocator::allocate_reduction_slot(const std::string& purpose, ir::DType dtype,
                                                      int64_t elements) {
  const size_t slot = static_cast<size_t>(reductions_++ % kReductionSlots);
  if (slot == reduction_slots_.size()) {
    allocate_private(purpose, dtype, elements);
    reduction_slots_.push_back(allocations_.back());
    return allocations_.back().offset;
  }
  const Allocation& taken = reduction_slots_[slot];
  const int64_t bytes = elements * ir::dtype_bytes(dtype);
  METILE_ASSERT(bytes <= round_up(taken.bytes),
                "a register reduction needs " + std::to_string(bytes) + " bytes, its slot has " +
                    std::to_string(taken.bytes));
  allocations_.push_back({purpose, taken.offset, bytes, dtype, elements});
  return taken.offset;
}

int64_t ThreadgroupAllocator::allocate_scratch(const std::string& purpose, ir::DType dtype,
                                               int64_t elements, int64_t alignment) {
  const int64_t bytes = elements * ir::dtype_bytes(dtype);
  const int64_t start = scratch_offset_ + pinned_bytes_;
  const int64_t offset = (start + alignment - 1) / alignment * alignment;
  scratch_bytes_ = std::max(scratch_bytes_, offset - scratch_offset_ + bytes);
  allocations_.push_back({purpose, offset, bytes, dtype, elements});
  return offset;
}

int64_t ThreadgroupAllocator::pin_scratch(const std::string& purpose, ir::DType dtype,
                                          int64_t elements, int64_t alignment) {
  const int64_t start = scratch_offset_ + pinned_bytes_;
  pinned_bytes_ += (start + alignment - 1) / alignment * alignment - start;
  const int64_t offset = allocate_scratch(purpose, dtype, elements);
  pinned_bytes_ += round_up(elements * ir::dtype_bytes(dtype));
  return offset;
}

int64_t ThreadgroupAllocator::user_bytes(const ir::Kernel& tile) {
  int64_t bytes = 0;
  ir::walk(tile.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::SharedAlloc)
      bytes += round_up(op.int_attr("size") * ir::dtype_bytes(tile.type(op.results[0]).dtype));
  });
  return bytes;
}

int64_t ThreadgroupAllocator::total_bytes() const {
  return round_up(scratch_offset_ + scratch_bytes_);
}

}  // namespace metile::lower
