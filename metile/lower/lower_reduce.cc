// reduce {sum|max|min}: a tile to one uniform scalar. Each thread combines its slots in a
// balanced tree, the SIMD group combines with simd_sum/max/min, and when the threadgroup has
// several SIMD groups, lane 0 of each publishes its partial to threadgroup scratch; after a
// barrier every thread reads all partials and combines them itself (so the result is
// uniform), and a second barrier releases the scratch for the next use.
//
// A register reduction, an FP32 sum at the kernel's top level (so it runs once), publishes into
// private scratch that no other kind of use touches, so the release barrier goes: register
// reductions take two slots in turn (ThreadgroupAllocator::allocate_reduction_slot), and the
// publication barrier of one releases the slot of the one before it.
#include <algorithm>
#include <cmath>

#include "metile/lower/lowering_steps.h"

namespace metile::lower {

ReduceKind reduce_kind(Lowering& l, const ir::Op& op) {
  const std::string& kind = op.str_attr("kind");
  if (kind == "sum") return {ir::OpKind::Add, ir::OpKind::SimdSum};
  if (kind == "max") return {ir::OpKind::Max, ir::OpKind::SimdMax};
  if (kind == "min") return {ir::OpKind::Min, ir::OpKind::SimdMin};
  l.not_supported(op, "reduction kind '" + kind + "' is not sum, max or min");
}

// The value that leaves any other unchanged under the combine op.
ir::ValueId reduce_identity(Lowering& l, const ir::Op& op, ir::OpKind combine, ir::DType dtype) {
  const bool is_max = combine == ir::OpKind::Max;
  if (combine == ir::OpKind::Add)
    return ir::is_float(dtype) ? l.const_float(0.0, dtype) : l.const_int(0, dtype);
  if (ir::is_float(dtype)) return l.const_float(is_max ? -INFINITY : INFINITY, dtype);
  if (!ir::is_integer(dtype))
    l.not_supported(op, "cannot reduce " + std::string(ir::dtype_name(dtype)) + " values");
  const ir::IntegerRange range = ir::integer_range(dtype);
  return l.const_int(is_max ? range.min : range.max, dtype);
}

// Pairs neighbours until one value is left: depth log2(n) instead of n.
ir::ValueId combine_tree(Lowering& l, ir::OpKind combine, ir::Type type,
                         std::vector<ir::ValueId> values) {
  while (values.size() > 1) {
    std::vector<ir::ValueId> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(l.emit(combine, {values[i], values[i + 1]}, type));
    if (values.size() % 2) next.push_back(values.back());
    values = std::move(next);
  }
  return values[0];
}

namespace {

bool is_register_reduction(const ir::Op& op, ir::DType dtype, int nesting) {
  return nesting == 0 && op.str_attr("kind") == "sum" && dtype == ir::DType::f32;
}

int64_t simd_groups(int64_t threads, const target::Target& target) {
  return (threads + target.simd_width - 1) / target.simd_width;
}

}  // namespace

int64_t register_reduction_bytes(const ir::Kernel& tile, const ThreadPlan& plan,
                                 const target::Target& target) {
  const int64_t groups = simd_groups(plan.threads_per_threadgroup, target);
  if (groups == 1) return 0;
  int64_t reductions = 0;
  for (const ir::Op& op : tile.body.ops)
    reductions += op.kind == ir::OpKind::Reduce &&
                  is_register_reduction(op, tile.type(op.operands[0]).dtype, 0);
  return std::min(reductions, ThreadgroupAllocator::kReductionSlots) *
         ThreadgroupAllocator::round_up(groups * ir::dtype_bytes(ir::DType::f32));
}

void lower_reduce(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.operands[0]);
  if (!t.is_tile()) l.not_supported(op, "reduces a tile, got " + t.str());
  if (l.plan.explicit_layouts && (op.str_attr("kind") != "sum" || t.dtype != ir::DType::f32))
    l.not_supported(op, "reduce." + op.str_attr("kind") + " of " +
                            std::string(ir::dtype_name(t.dtype)) +
                            " values in a kernel with explicit layouts: only FP32 sums are "
                            "supported there; cast to FP32 before summing");
  const ir::Type scalar = ir::Type::scalar(t.dtype);
  const ReduceKind kind = reduce_kind(l, op);
  const ir::ValueId neutral = reduce_identity(l, op, kind.combine, t.dtype);

  std::vector<ir::ValueId> slots = l.get(op.operands[0]).slots;
  if (l.has_idle_threads(t))
    slots[0] =
        l.emit(ir::OpKind::Select, {l.owns_element(t.num_elements()), slots[0], neutral}, scalar);
  const ir::ValueId partial = combine_tree(l, kind.combine, scalar, slots);
  const ir::ValueId group_result = l.emit(kind.simd, {partial}, scalar);

  const int64_t groups = simd_groups(l.threads, l.target);
  const bool private_scratch = is_register_reduction(op, t.dtype, l.nesting);
  const std::string operation = op.str_attr("kind") + " (" + l.name(op.results[0]) + ")";
  if (groups == 1) {
    if (private_scratch)
      l.register_reductions.push_back(
          {operation, t.dtype, l.threads, l.slot_count(t), "none: one SIMD group"});
    l.bind(op.results[0], {{group_result}, false, true});
    return;
  }
  const std::string purpose = "reduce." + op.str_attr("kind") +
                              (private_scratch ? " private scratch (" : " scratch (") +
                              l.name(op.results[0]) + ")";
  const ir::ValueId buffer =
      l.scratch(purpose, private_scratch ? "private_reduction" : "reduction", t.dtype, groups);
  if (private_scratch) {
    const Allocation& a = l.allocator.allocations().back();
    l.register_reductions.push_back({operation, t.dtype, l.threads, l.slot_count(t),
                                     "private scratch at offset " + std::to_string(a.offset) +
                                         ", " + std::to_string(a.bytes) + " bytes"});
  }
  const ir::Type i32 = ir::Type::scalar(ir::DType::i32);
  const ir::Type ptr = l.metal.type(buffer);
  const ir::ValueId lane = l.emit(ir::OpKind::SimdLane, {}, i32);
  const ir::ValueId group = l.emit(ir::OpKind::SimdGroup, {}, i32);
  const ir::ValueId first_lane =
      l.emit(ir::OpKind::Cmp, {lane, l.const_int(0)}, ir::Type::scalar(ir::DType::i1),
             {{"pred", std::string("eq")}});
  l.emit_void(ir::OpKind::Store,
              {l.emit(ir::OpKind::PtrAdd, {buffer, group}, ptr), group_result, first_lane});
  l.threadgroup_barrier();
  std::vector<ir::ValueId> partials;
  for (int64_t g = 0; g < groups; ++g)
    partials.push_back(l.emit(ir::OpKind::Load,
                              {l.emit(ir::OpKind::PtrAdd, {buffer, l.const_int(g)}, ptr)}, scalar));
  const ir::ValueId total = combine_tree(l, kind.combine, scalar, partials);
  if (!private_scratch) l.threadgroup_barrier();
  l.bind(op.results[0], {{total}, false, true});
}

}  // namespace metile::lower
