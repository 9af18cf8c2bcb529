// convert_layout: the same logical tile in another ThreadLayout. The owner map, enumerated at
// compile time, picks the cheapest mechanism that is correct for every thread:
//   forward       every thread already holds each of its new slots in one old slot
//   simd_shuffle  every element comes from a thread of the same SIMD group, and each new slot
//                 from one old slot: one shuffle per slot, reading the exact source lane
//   scratch       otherwise: every thread stores its slots at their logical indices in typed
//                 threadgroup scratch, a barrier publishes them, every thread loads its new
//                 slots, and a second barrier releases the scratch for the next use
// Every launched thread takes part; nothing is masked, since explicit layouts cover every
// thread of the plan. i1 values cross threads as i32.
#include <map>

#include "metile/lower/lowering_steps.h"

namespace metile::lower {

namespace {

const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);

int log2_exact(int64_t n) {
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

// For each new slot, the old slot that holds its element in the calling thread or, with
// `same_group`, in a thread of its SIMD group; empty when that slot differs between threads or
// an element lies farther away.
std::vector<int64_t> source_slots(const Lowering& l, const ir::ThreadLayout& from,
                                  const ir::ThreadLayout& to, bool same_group) {
  const int64_t width = l.target.simd_width;
  std::vector<int64_t> slots;
  for (int64_t r = 0; r < to.elements_per_thread(); ++r) {
    int64_t slot = -1;
    for (int64_t t = 0; t < to.thread_count(); ++t) {
      const int64_t index = to.logical_index(t, r);
      const int64_t owner = from.owner(index);
      if (same_group ? owner / width != t / width : owner != t) return {};
      if (slot != -1 && slot != from.register_of(index)) return {};
      slot = from.register_of(index);
    }
    slots.push_back(slot);
  }
  return slots;
}

// The thread that `layout` makes the owner of a logical index (i32 per thread): the index's
// bits that come from thread bits, moved back to their physical positions.
ir::ValueId emit_owner(Lowering& l, const ir::ThreadLayout& layout, ir::ValueId index) {
  const int thread_bits = log2_exact(layout.thread_count());
  ir::ValueId x = index;
  if (layout.xor_mask()) x = l.emit(ir::OpKind::Xor, {x, l.const_int(layout.xor_mask())}, kI32);
  std::map<int, int64_t> bits_by_shift;  // logical bits moving by one distance, by distance
  const std::vector<int>& order = layout.bit_order();
  for (size_t logical = 0; logical < order.size(); ++logical)
    if (order[logical] < thread_bits)
      bits_by_shift[order[logical] - static_cast<int>(logical)] |= int64_t{1} << logical;
  ir::ValueId owner = ir::kNoValue;
  for (const auto& [shift, bits] : bits_by_shift) {
    ir::ValueId piece = l.emit(ir::OpKind::And, {x, l.const_int(bits)}, kI32);
    if (shift > 0) piece = l.emit(ir::OpKind::Shl, {piece, l.const_int(shift)}, kI32);
    if (shift < 0) piece = l.emit(ir::OpKind::Shr, {piece, l.const_int(-shift)}, kI32);
    owner = owner == ir::kNoValue ? piece : l.emit(ir::OpKind::Or, {owner, piece}, kI32);
  }
  return owner == ir::kNoValue ? l.const_int(0) : owner;
}

// i1 crosses threads as i32 (0 or 1); other dtypes as themselves.
ir::ValueId widen(Lowering& l, ir::ValueId v, ir::DType dtype) {
  if (dtype != ir::DType::i1) return v;
  return l.emit(ir::OpKind::Select, {v, l.const_int(1), l.const_int(0)}, kI32);
}
ir::ValueId narrow(Lowering& l, ir::ValueId v, ir::DType dtype) {
  if (dtype != ir::DType::i1) return v;
  return l.emit(ir::OpKind::Cmp, {v, l.const_int(0)}, ir::Type::scalar(ir::DType::i1),
                {{"pred", std::string("ne")}});
}

std::vector<ir::ValueId> shuffle(Lowering& l, const std::vector<ir::ValueId>& values,
                                 ir::DType dtype, const ir::ThreadLayout& from,
                                 const ir::ThreadLayout& to, const std::vector<int64_t>& slots) {
  const ir::DType moved = dtype == ir::DType::i1 ? ir::DType::i32 : dtype;
  std::vector<ir::ValueId> result;
  for (size_t r = 0; r < slots.size(); ++r) {
    const ir::ValueId owner = emit_owner(l, from, l.logical_index(to, static_cast<int64_t>(r)));
    const ir::ValueId lane =
        l.emit(ir::OpKind::And, {owner, l.const_int(l.target.simd_width - 1)}, kI32);
    const ir::ValueId value = widen(l, values[slots[r]], dtype);
    result.push_back(
        narrow(l, l.emit(ir::OpKind::SimdShuffle, {value, lane}, ir::Type::scalar(moved)), dtype));
  }
  return result;
}

std::vector<ir::ValueId> through_scratch(Lowering& l, const ir::Op& op,
                                         const std::vector<ir::ValueId>& values,
                                         const ir::Type& type, const ir::ThreadLayout& from,
                                         const ir::ThreadLayout& to) {
  const ir::DType moved = type.dtype == ir::DType::i1 ? ir::DType::i32 : type.dtype;
  const ir::ValueId buffer = l.scratch("convert_layout exchange (" + l.name(op.results[0]) + ")",
                                       "exchange", moved, type.num_elements());
  const ir::Type ptr = l.metal.type(buffer);
  for (size_t r = 0; r < values.size(); ++r) {
    const ir::ValueId at =
        l.emit(ir::OpKind::PtrAdd, {buffer, l.logical_index(from, static_cast<int64_t>(r))}, ptr);
    l.emit_void(ir::OpKind::Store, {at, widen(l, values[r], type.dtype)});
  }
  l.threadgroup_barrier();
  std::vector<ir::ValueId> result;
  for (int64_t r = 0; r < to.elements_per_thread(); ++r) {
    const ir::ValueId at = l.emit(ir::OpKind::PtrAdd, {buffer, l.logical_index(to, r)}, ptr);
    result.push_back(
        narrow(l, l.emit(ir::OpKind::Load, {at}, ir::Type::scalar(moved)), type.dtype));
  }
  l.threadgroup_barrier();
  return result;
}

}  // namespace

void lower_convert_layout(Lowering& l, const ir::Op& op) {
  const ir::Type& type = l.tile_type(op.results[0]);
  const ir::ThreadLayout& to = *op.layout_attr("layout");
  const LoweredValue& operand = l.get(op.operands[0]);
  const std::string conversion = l.name(op.results[0]);
  LoweredValue result;
  result.layout = to;
  if (operand.uniform) {  // a splat is the same in every layout
    result.slots.assign(l.slot_count(type), operand.slots[0]);
    result.uniform = true;
    l.layout_conversions.push_back({conversion, "forward (a splat)", "none"});
    l.bind(op.results[0], std::move(result));
    return;
  }
  const ir::ThreadLayout& from = l.layout_of(op.operands[0]);
  if (type.pointer)
    l.not_supported(op,
                    "moving a tile of pointers between threads; convert the offsets and add "
                    "them to a scalar pointer instead");
  if (to.thread_count() != l.threads)
    l.user_error(op, "the layout " + to.str() + " covers " + std::to_string(to.thread_count()) +
                         " threads, but the kernel runs " + std::to_string(l.threads));
  if (const std::vector<int64_t> slots = source_slots(l, from, to, false); !slots.empty()) {
    for (int64_t s : slots) result.slots.push_back(operand.slots[s]);
    l.layout_conversions.push_back({conversion, "forward", "none"});
  } else if (const std::vector<int64_t> lanes = source_slots(l, from, to, true); !lanes.empty()) {
    result.slots = shuffle(l, operand.slots, type.dtype, from, to, lanes);
    l.layout_conversions.push_back({conversion, "simd_shuffle", "none"});
  } else {
    result.slots = through_scratch(l, op, operand.slots, type, from, to);
    const Allocation& a = l.allocator.allocations().back();
    l.layout_conversions.push_back({conversion, "threadgroup scratch",
                                    "shared scratch at offset " + std::to_string(a.offset) + ", " +
                                        std::to_string(a.bytes) + " bytes"});
  }
  l.bind(op.results[0], std::move(result));
}

}  // namespace metile::lower
