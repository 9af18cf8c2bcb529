// expand_dims and broadcast change which logical element a slot holds. The owner map is
// enumerated at compile time (tile sizes are constants): when every thread already holds
// the source of each of its destination slots, the SSA values are forwarded; when every
// source lies in the thread's SIMD group, one simd_shuffle per slot reads it from the exact
// source lane; when the broadcast's source is an index computation (arange, splats of uniform
// scalars and the integer, comparison and pointer ops over them: a Triton kernel's offsets and
// masks) each thread recomputes its elements (rematerialise.h); otherwise all threads exchange
// through threadgroup scratch (store, barrier, load, barrier), every thread taking part
// unconditionally.
#include <algorithm>
#include <functional>

#include "metile/lower/lowering_steps.h"
#include "metile/lower/rematerialise.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

using IndexMap = std::function<int64_t(int64_t)>;

// For each destination slot, the source slot holding its element in the same thread or, with
// `same_group`, in a thread of the same SIMD group; empty when some element lives farther away
// (or in a slot that differs between threads). Threads past a layout's thread count own
// nothing and need nothing.
std::vector<int64_t> source_slots(const Lowering& l, const ir::ThreadLayout& dest,
                                  const ir::ThreadLayout& source, const IndexMap& source_of,
                                  bool same_group) {
  const int64_t width = l.target.simd_width;
  std::vector<int64_t> slots;
  for (int64_t r = 0; r < dest.elements_per_thread(); ++r) {
    int64_t slot = -1;
    for (int64_t t = 0; t < std::min<int64_t>(l.threads, dest.thread_count()); ++t) {
      const int64_t s = source_of(dest.logical_index(t, r));
      const int64_t owner = source.owner(s);
      // A replicated source holds s in every replica of its owner, t among them or not.
      const bool held =
          t < source.thread_count() && source.logical_index(t, source.register_of(s)) == s;
      if (same_group ? owner / width != t / width : !held) return {};
      if (slot != -1 && slot != source.register_of(s)) return {};
      slot = source.register_of(s);
    }
    slots.push_back(slot);
  }
  return slots;
}

// The source index of the destination element d (i32, per thread) for a broadcast between
// tiles of one rank: coordinates along the source's size-1 dimensions become 0.
ir::ValueId emit_source_index(Lowering& l, ir::ValueId d, const ir::Type& dest,
                              const ir::Type& source) {
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  if (source.num_elements() == 1) return l.const_int(0);
  if (dest.shape.size() == 1) return d;
  const int64_t cols = dest.shape[1];
  ir::ValueId index = ir::kNoValue;
  if (source.shape[1] != 1) index = l.emit(ir::OpKind::And, {d, l.const_int(cols - 1)}, i32);
  if (source.shape[0] != 1) {
    ir::ValueId row = l.emit(ir::OpKind::Shr, {d, l.const_int(log2_exact(cols))}, i32);
    if (source.shape[1] != 1)
      row = l.emit(ir::OpKind::Shl, {row, l.const_int(log2_exact(source.shape[1]))}, i32);
    index = index == ir::kNoValue ? row : l.emit(ir::OpKind::Or, {row, index}, i32);
  }
  return index;
}

// The source coordinates (i32 per dimension) of destination element d of a broadcast between
// tiles of one rank: 0 along the source's size-1 dimensions.
std::vector<ir::ValueId> source_coordinates(Lowering& l, ir::ValueId d, const ir::Type& dest,
                                            const ir::Type& source) {
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  if (dest.shape.size() == 1) return {source.shape[0] == 1 ? l.const_int(0) : d};
  const int64_t cols = dest.shape[1];
  const ir::ValueId row = source.shape[0] == 1
                              ? l.const_int(0)
                              : l.emit(ir::OpKind::Shr, {d, l.const_int(log2_exact(cols))}, i32);
  const ir::ValueId column = source.shape[1] == 1
                                 ? l.const_int(0)
                                 : l.emit(ir::OpKind::And, {d, l.const_int(cols - 1)}, i32);
  return {row, column};
}

void exchange(Lowering& l, const ir::Op& op, const ir::Type& dest, const ir::Type& source) {
  if (source.pointer)
    l.not_supported(op,
                    "moving a tile of pointers between threads; broadcast the offsets "
                    "and add them to a scalar pointer instead");
  const std::vector<ir::ValueId>& values = l.get(op.operands[0]).slots;
  const ir::ValueId buffer =
      l.scratch(std::string(ir::op_name(op.kind)) + " exchange (" + l.name(op.results[0]) + ")",
                "exchange", source.dtype, source.num_elements());
  const ir::Type ptr = l.metal.type(buffer);
  const ir::Type element = source.element();

  const ir::ThreadLayout& source_layout = l.layout_of(op.operands[0]);
  const ir::ThreadLayout dest_layout = l.layout(dest);
  const ir::ValueId source_owns = l.writes_elements(source_layout);
  for (size_t r = 0; r < values.size(); ++r) {
    std::vector<ir::ValueId> operands = {
        l.emit(ir::OpKind::PtrAdd,
               {buffer, l.logical_index(source_layout, static_cast<int64_t>(r))}, ptr),
        values[r]};
    if (source_owns != ir::kNoValue) operands.push_back(source_owns);
    l.emit_void(ir::OpKind::Store, operands);
  }
  l.threadgroup_barrier();

  const ir::ValueId dest_owns =
      l.has_idle_threads(dest) ? l.owns_element(dest.num_elements()) : ir::kNoValue;
  LoweredValue result;
  for (int64_t r = 0; r < l.slot_count(dest); ++r) {
    const ir::ValueId index = emit_source_index(l, l.logical_index(dest_layout, r), dest, source);
    const ir::ValueId address = l.emit(ir::OpKind::PtrAdd, {buffer, index}, ptr);
    if (dest_owns == ir::kNoValue) {
      result.slots.push_back(l.emit(ir::OpKind::Load, {address}, element));
      continue;
    }
    const ir::ValueId fill = ir::is_float(source.dtype) ? l.const_float(0.0, source.dtype)
                                                        : l.const_int(0, source.dtype);
    result.slots.push_back(l.emit(ir::OpKind::Load, {address, dest_owns, fill}, element));
  }
  l.threadgroup_barrier();
  result.layout = dest_layout;
  l.bind(op.results[0], std::move(result));
}

}  // namespace

void lower_expand_dims(Lowering& l, const ir::Op& op) {
  // [N] -> [1, N] or [N, 1] keeps every row-major logical index, hence every owner.
  l.bind(op.results[0], l.get(op.operands[0]));
}

void lower_broadcast(Lowering& l, const ir::Op& op) {
  const ir::Type& source = l.tile_type(op.operands[0]);
  const ir::Type& dest = l.tile_type(op.results[0]);
  if (source.shape.size() != dest.shape.size())
    l.not_supported(op, "broadcast between ranks " + std::to_string(source.shape.size()) + " and " +
                            std::to_string(dest.shape.size()) + "; expand_dims the operand first");
  const IndexMap source_of = [&](int64_t d) {
    if (dest.shape.size() == 1) return source.shape[0] == 1 ? int64_t{0} : d;
    const int64_t row = d / dest.shape[1], col = d % dest.shape[1];
    return (source.shape[0] == 1 ? 0 : row) * source.shape[1] + (source.shape[1] == 1 ? 0 : col);
  };
  const LoweredValue& operand = l.get(op.operands[0]);
  if (operand.uniform) {
    l.bind(op.results[0],
           {std::vector<ir::ValueId>(l.slot_count(dest), operand.slots[0]), true, true});
    return;
  }
  const ir::ThreadLayout dest_layout = l.layout(dest);
  const ir::ThreadLayout& source_layout = l.layout_of(op.operands[0]);
  const std::vector<ir::ValueId>& values = operand.slots;
  LoweredValue result;
  result.layout = dest_layout;
  if (const std::vector<int64_t> slots =
          source_slots(l, dest_layout, source_layout, source_of, false);
      !slots.empty()) {
    for (int64_t s : slots) result.slots.push_back(values[s]);
  } else if (const std::vector<int64_t> lanes =
                 source_slots(l, dest_layout, source_layout, source_of, true);
             !lanes.empty() && !source.pointer) {
    // Every source element sits in the same SIMD group: one shuffle per slot, no scratch.
    for (size_t r = 0; r < lanes.size(); ++r) {
      const ir::ValueId index =
          emit_source_index(l, l.logical_index(dest_layout, static_cast<int64_t>(r)), dest, source);
      result.slots.push_back(
          l.shuffle_from_owner(values[lanes[r]], source.dtype, source_layout, index));
    }
  } else if (Rematerialise remat(l, l.definers); remat.possible(op.operands[0])) {
    for (int64_t r = 0; r < l.slot_count(dest); ++r)
      result.slots.push_back(remat.at(
          op.operands[0], source_coordinates(l, l.logical_index(dest_layout, r), dest, source)));
  } else {
    return exchange(l, op, dest, source);
  }
  l.bind(op.results[0], std::move(result));
}

}  // namespace metile::lower
