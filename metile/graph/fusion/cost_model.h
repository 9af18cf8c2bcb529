// The analytical costs the fusion planner weighs, all from a target::Target, in integer
// nanoseconds so that the s-t networks have exact, deterministic capacities.
//
//  - a kernel launch costs Target::launch_cost_us;
//  - moving a tensor through device memory (one write or one read) costs its bytes at
//    Target::memory_bandwidth_gbps (1 GB/s = 1 byte/ns);
//  - an op inside a fused kernel adds register and threadgroup-memory demand; its pressure
//    cost is kPressureWeight launches scaled by the larger of its shares of the Target's
//    registers and threadgroup memory (an op that fills either halves the occupancy that
//    hides latency, worth about half a launch). Pressure is a soft bias; the hard limit
//    below is what keeps regions compilable;
//  - a region whose demand exceeds registers_per_thread or threadgroup_memory_bytes is
//    illegal.
//
// Demand is a planning estimate, not an allocation: a kernel of the region is assumed to run
// kPlanningThreads threads per threadgroup (fewer if the target allows fewer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metile/graph/graph_ir.h"
#include "metile/target/target.h"

namespace metile::graph {

struct OpResources {
  int registers = 0;  // 32-bit registers per thread
  int64_t threadgroup_bytes = 0;
};

class CostModel {
 public:
  static constexpr int kPlanningThreads = 256;
  static constexpr int kBaseRegisters = 16;        // indices, addresses, loop state
  static constexpr int kElementwiseRegisters = 2;  // a value in flight
  static constexpr int kMatmulTileM = 64, kMatmulTileN = 64, kMatmulTileK = 32;
  static constexpr int kMatmulThreads = 128;
  static constexpr int kMatmulOperandRegisters = 16;
  static constexpr double kPressureWeight = 0.5;

  explicit CostModel(const target::Target& target);

  const target::Target& target() const { return target_; }
  int64_t launch_ns() const { return launch_ns_; }
  // One pass of `bytes` through device memory.
  int64_t transfer_ns(int64_t bytes) const;
  OpResources resources(const Graph& graph, int op) const;
  // A flash_attention kernel over queries `q` (..., L, D), keys `kt` (..., D, S) and values
  // `v` (..., S, E): its threadgroup memory is what the kernel allocates on the target for the
  // tiles attention_tiles.h gives it (on sm90's wgmma_staged path, the K/V prefetch ring).
  OpResources flash_attention_resources(const TensorSpec& q, const TensorSpec& kt,
                                        const TensorSpec& v) const;
  int64_t pressure_ns(const OpResources& r) const;
  // Demand of a whole region: the base plus every op's share.
  OpResources region_resources(const Graph& graph, const std::vector<int>& ops) const;
  // nullopt when `r` fits the target, otherwise "needs N registers > M" (or threadgroup bytes).
  std::optional<std::string> resource_violation(const OpResources& r) const;

 private:
  target::Target target_;
  int64_t launch_ns_;
  int threads_;
};

}  // namespace metile::graph
