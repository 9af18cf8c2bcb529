// convert_layout: the same logical tile in another ThreadLayout. The owner map, enumerated at
// compile time, picks the cheapest mechanism that is correct for every thread:
//   forward       every thread already holds each of its new slots in one old slot
//   simd_shuffle  every element comes from a thread of the same SIMD group: per new slot,
//                 one shuffle from the exact source lane of each old slot some thread reads
//                 it from, and a select among them where that slot differs between threads
//   scratch       otherwise: every thread stores its slots at their logical indices in typed
//                 threadgroup scratch, a barrier publishes them, every thread loads its new
//                 slots, and a second barrier releases the scratch for the next use
// Every launched thread takes part; nothing is masked, since explicit layouts cover every
// thread of the plan. i1 values cross threads as i32.
#include <algorithm>

#include "metile/lower/lowering_steps.h"

namespace metile::lower {

namespace {

const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);

// Where the new slots come from: for each new slot, the old slots that hold its element in
// the calling thread (`same_group` false) or in a thread of its SIMD group (true), in the
// order first met; empty when an element lies farther away.
std::vector<std::vector<int64_t>> source_slots(const Lowering& l, const ir::ThreadLayout& from,
                                               const ir::ThreadLayout& to, bool same_group) {
  const int64_t width = l.target.simd_width;
  std::vector<std::vector<int64_t>> slots;
  for (int64_t r = 0; r < to.elements_per_thread(); ++r) {
    std::vector<int64_t> used;
    for (int64_t t = 0; t < to.thread_count(); ++t) {
      const int64_t index = to.logical_index(t, r);
      const int64_t owner = from.owner(index);
      if (same_group ? owner / width != t / width : owner != t) return {};
      if (std::find(used.begin(), used.end(), from.register_of(index)) == used.end())
        used.push_back(from.register_of(index));
    }
    slots.push_back(std::move(used));
  }
  return slots;
}

bool one_slot_each(const std::vector<std::vector<int64_t>>& slots) {
  return std::all_of(slots.begin(), slots.end(), [](const auto& used) { return used.size() == 1; });
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

// Each new slot from the old slots `slots` lists for it, read from the owner's lane when
// `shuffled` (else the calling thread's own) and, where the old slot differs between threads
// (a register bit exchanged with a lane bit), chosen by the old slot computed from the
// logical index.
std::vector<ir::ValueId> gather(Lowering& l, const std::vector<ir::ValueId>& values,
                                ir::DType dtype, const ir::ThreadLayout& from,
                                const ir::ThreadLayout& to,
                                const std::vector<std::vector<int64_t>>& slots, bool shuffled) {
  std::vector<ir::ValueId> result;
  for (size_t r = 0; r < slots.size(); ++r) {
    const std::vector<int64_t>& used = slots[r];
    const ir::ValueId index =
        shuffled || used.size() > 1 ? l.logical_index(to, static_cast<int64_t>(r)) : ir::kNoValue;
    auto read = [&](int64_t slot) {
      return shuffled ? l.shuffle_from_owner(values[slot], dtype, from, index) : values[slot];
    };
    ir::ValueId value = read(used[0]);
    if (used.size() > 1) {
      const ir::ValueId slot = l.register_of(from, index);
      for (size_t k = 1; k < used.size(); ++k) {
        const ir::ValueId here =
            l.emit(ir::OpKind::Cmp, {slot, l.const_int(used[k])}, ir::Type::scalar(ir::DType::i1),
                   {{"pred", std::string("eq")}});
        value = l.emit(ir::OpKind::Select, {here, read(used[k]), value}, l.metal.type(value));
      }
    }
    result.push_back(value);
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
  // Between bit-permutation layouts a thread that keeps its elements keeps them in one old
  // slot per new slot (the thread bits agree, so the register bits map to register bits).
  if (const auto slots = source_slots(l, from, to, false); !slots.empty() && one_slot_each(slots)) {
    result.slots = gather(l, operand.slots, type.dtype, from, to, slots, false);
    l.layout_conversions.push_back({conversion, "forward", "none"});
  } else if (const auto lanes = source_slots(l, from, to, true); !lanes.empty()) {
    result.slots = gather(l, operand.slots, type.dtype, from, to, lanes, true);
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
