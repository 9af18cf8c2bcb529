#include "metile/graph/fusion/cost_model.h"

#include <algorithm>
#include <cmath>

#include "metile/graph/attention_tiles.h"

namespace metile::graph {

CostModel::CostModel(const target::Target& target)
    : target_(target),
      launch_ns_(std::llround(target.launch_cost_us * 1000.0)),
      threads_(std::min(kPlanningThreads, target.max_threads_per_threadgroup)) {}

int64_t CostModel::transfer_ns(int64_t bytes) const {
  return std::llround(static_cast<double>(bytes) / target_.memory_bandwidth_gbps);
}

OpResources CostModel::resources(const Graph& graph, int op_id) const {
  const Op& op = graph.op(op_id);
  switch (fusion_class(op.kind)) {
    case FusionClass::Elementwise:
      return {kElementwiseRegisters, 0};
    case FusionClass::Opaque:
      if (op.kind == OpKind::FlashAttention)
        return flash_attention_resources(graph.spec(op.inputs[0]), graph.spec(op.inputs[1]),
                                         graph.spec(op.inputs[2]));
      return {kElementwiseRegisters, 0};
    case FusionClass::RowReduction: {
      // The row stays in registers (f32) because it is read again after the reduction; the
      // SIMD-group partials (two for softmax: max and sum) meet in threadgroup memory.
      const TensorSpec& in = graph.spec(op.inputs[0]);
      int64_t row = in.shape[op.int_attr("axis")];
      int partials = op.kind == OpKind::Softmax ? 2 : 1;
      int row_registers = static_cast<int>((row + threads_ - 1) / threads_);
      int64_t simd_groups = std::max(1, threads_ / target_.simd_width);
      return {row_registers + partials, simd_groups * 4 * partials};
    }
    case FusionClass::Matmul: {
      // f32 accumulators of the output tile, operand fragments, and double-buffered staging.
      int accumulators = kMatmulTileM * kMatmulTileN / kMatmulThreads;
      int64_t staging = int64_t{2} * (kMatmulTileM + kMatmulTileN) * kMatmulTileK *
                        dtype_bytes(graph.spec(op.output).dtype);
      return {accumulators + kMatmulOperandRegisters, staging};
    }
  }
  return {};
}

// Registers: one query tile of kMatmulTileM rows, its f32 output accumulator and two row
// statistics (maximum, normaliser). Threadgroup memory: what the kernel allocates for the
// target's tiles.
OpResources CostModel::flash_attention_resources(const TensorSpec& q, const TensorSpec& kt,
                                                 const TensorSpec& v) const {
  int64_t value_head = v.shape.back();
  int accumulators =
      static_cast<int>((kMatmulTileM * value_head + kMatmulThreads - 1) / kMatmulThreads);
  const AttentionTiles tiles = attention_tiles(q, kt, v, target_);
  return {accumulators + 2 + kMatmulOperandRegisters, tiles.threadgroup_bytes()};
}

int64_t CostModel::pressure_ns(const OpResources& r) const {
  double registers = static_cast<double>(r.registers) / target_.registers_per_thread;
  double scratch = static_cast<double>(r.threadgroup_bytes) / target_.threadgroup_memory_bytes;
  return std::llround(kPressureWeight * std::max(registers, scratch) *
                      static_cast<double>(launch_ns_));
}

OpResources CostModel::region_resources(const Graph& graph, const std::vector<int>& ops) const {
  OpResources total{kBaseRegisters, 0};
  for (int o : ops) {
    OpResources r = resources(graph, o);
    total.registers += r.registers;
    total.threadgroup_bytes += r.threadgroup_bytes;
  }
  return total;
}

std::optional<std::string> CostModel::resource_violation(const OpResources& r) const {
  if (r.registers > target_.registers_per_thread)
    return "needs " + std::to_string(r.registers) + " registers > " +
           std::to_string(target_.registers_per_thread);
  if (r.threadgroup_bytes > target_.threadgroup_memory_bytes)
    return "needs " + std::to_string(r.threadgroup_bytes) + " threadgroup bytes > " +
           std::to_string(target_.threadgroup_memory_bytes);
  return std::nullopt;
}

}  // namespace metile::graph
