#include "metile/lower/plan_axis_slices.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "metile/support/bits.h"

namespace metile::lower {

namespace {

using K = ir::OpKind;

// Ops that read or write a replicated tile correctly: each replica computes, loads or carries
// the same value, and stores mask every replica but the canonical one (writes_elements).
const std::set<K> kReplicaSafe = {
    K::Add,  K::Sub,   K::Mul,    K::Div,  K::Rem,   K::FloorDiv, K::Min,        K::Max,
    K::And,  K::Or,    K::Xor,    K::Shl,  K::Shr,   K::Cmp,      K::Select,     K::Cast,
    K::Neg,  K::Abs,   K::Exp,    K::Exp2, K::Log,   K::Sqrt,     K::Rsqrt,      K::Tanh,
    K::Sin,  K::Cos,   K::Floor,  K::Ceil, K::Splat, K::Arange,   K::ExpandDims, K::Broadcast,
    K::Load, K::Store, K::PtrAdd, K::For,  K::If,    K::While,    K::Yield};

bool is_vector(const ir::Type& t) {
  return t.shape.size() == 1 || (t.shape.size() == 2 && (t.shape[0] == 1 || t.shape[1] == 1));
}

ir::ThreadLayout planned_layout(const ThreadPlan& plan, int64_t size) {
  for (const ir::ThreadLayout& layout : plan.layouts)
    if (layout.size() == size) return layout;
  return ir::ThreadLayout::identity(size,
                                    std::max<int64_t>(1, size / plan.threads_per_threadgroup));
}

// Whether every tile of `size` elements is a vector that only replica-safe ops touch, and the
// only reductions touching one produce it.
bool replicas_allowed(const ir::Kernel& k, int64_t size) {
  bool allowed = true;
  const auto sized = [&](ir::ValueId v) {
    const ir::Type& t = k.type(v);
    return t.is_tile() && t.num_elements() == size;
  };
  ir::walk(k.body, [&](const ir::Op& op) {
    bool touches = false;
    for (ir::ValueId v : op.results) touches = touches || sized(v);
    bool reads = false;
    for (ir::ValueId v : op.operands) reads = reads || sized(v);
    for (const ir::Block& region : op.regions)
      for (ir::ValueId a : region.args) touches = touches || sized(a);
    if (!touches && !reads) return;
    for (ir::ValueId v : op.results)
      if (sized(v) && !is_vector(k.type(v))) allowed = false;
    for (ir::ValueId v : op.operands)
      if (sized(v) && !is_vector(k.type(v))) allowed = false;
    const bool produced_by_reduction = op.kind == K::ReduceAxis && !reads;
    if (!produced_by_reduction && !kReplicaSafe.count(op.kind)) allowed = false;
  });
  return allowed;
}

// Whether every logical bit the reduction removes is a register bit or a lane bit.
bool within_simd_groups(const ir::ThreadLayout& source, int64_t columns, int axis, int simd_width) {
  const int column_bits = log2_exact(columns);
  const int thread_bits = log2_exact(source.thread_count());
  const int lane_bits = log2_exact(simd_width);
  const std::vector<int>& order = source.bit_order();
  const int first = axis == 1 ? 0 : column_bits;
  const int last = axis == 1 ? column_bits : static_cast<int>(order.size());
  for (int b = first; b < last; ++b)
    if (order[b] >= lane_bits && order[b] < thread_bits) return false;
  return true;
}

}  // namespace

ir::ThreadLayout axis_slice(const ir::ThreadLayout& source, int64_t rows, int64_t columns,
                            int axis) {
  const int column_bits = log2_exact(columns), row_bits = log2_exact(rows);
  const int first = axis == 1 ? column_bits : 0;
  const int count = axis == 1 ? row_bits : column_bits;
  const int thread_bits = log2_exact(source.thread_count());
  const std::vector<int>& order = source.bit_order();
  std::vector<int> kept_registers;
  for (int b = first; b < first + count; ++b)
    if (order[b] >= thread_bits) kept_registers.push_back(order[b] - thread_bits);
  std::sort(kept_registers.begin(), kept_registers.end());
  std::vector<int> slice;
  for (int b = first; b < first + count; ++b) {
    if (order[b] < thread_bits) {
      slice.push_back(order[b]);
      continue;
    }
    const auto rank =
        std::find(kept_registers.begin(), kept_registers.end(), order[b] - thread_bits) -
        kept_registers.begin();
    slice.push_back(thread_bits + static_cast<int>(rank));
  }
  const int64_t xor_mask =
      axis == 1 ? source.xor_mask() >> column_bits : source.xor_mask() & (columns - 1);
  return ir::ThreadLayout(std::move(slice), xor_mask, int64_t{1} << kept_registers.size(),
                          source.thread_count());
}

void plan_axis_slices(const ir::Kernel& k, ThreadPlan& plan, int simd_width) {
  if (plan.explicit_layouts) return;
  const int64_t threads = plan.threads_per_threadgroup;
  std::map<int64_t, std::optional<ir::ThreadLayout>> slices;  // nullopt: reductions disagree
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind != K::ReduceAxis) return;
    const ir::Type& source = k.type(op.operands[0]);
    const int64_t size = k.type(op.results[0]).num_elements();
    std::optional<ir::ThreadLayout> slice;
    const ir::ThreadLayout held = planned_layout(plan, source.num_elements());
    const int axis = static_cast<int>(op.int_attr("axis"));
    if (source.shape.size() == 2 && held.thread_count() == threads &&
        is_power_of_two(source.shape[0]) && is_power_of_two(source.shape[1]) &&
        within_simd_groups(held, source.shape[1], axis, simd_width))
      slice = axis_slice(held, source.shape[0], source.shape[1], axis);
    const auto [it, fresh] = slices.emplace(size, slice);
    if (!fresh && !(it->second && slice && *it->second == *slice)) it->second.reset();
  });
  for (const auto& [tile_size, slice] : slices) {
    if (!slice) continue;
    const int64_t size = tile_size;  // clang 14 captures no structured binding
    const bool planned = std::any_of(plan.layouts.begin(), plan.layouts.end(),
                                     [&](const ir::ThreadLayout& l) { return l.size() == size; });
    if (planned || !replicas_allowed(k, size)) continue;
    plan.layouts.push_back(*slice);
  }
}

}  // namespace metile::lower
