// ParallelEpilogueRule, the default pattern rule of plan_graph_fusion (seed 000, "Automatic
// Gated Epilogues"): the SwiGLU feed-forward block
//   g = matmul(x, Wg)   u = matmul(x, Wu)   a = silu(g)   h = a * u  (or u * a)   y = matmul(h, Wd)
// is one region. The pairwise rules cannot propose it (a matmul does not fuse its producers),
// so the rule proposes it whole, as a candidate that competes in selection like any other.
//
// A match needs the two matmuls to share their left operand (the activation x), g and u to
// have one shape (no broadcasting in the multiply), and h to be the left operand of y. It is
// rejected, with the reason, when an intermediate (g, u, a, h) escapes, or when neither of the
// region's two schedules fits the Target:
//   register-fused  gate and up accumulators live together, x, Wg and Wu tiles staged;
//   scratch-spilled the gate result waits in threadgroup memory while the up reduction
//                   reuses its accumulator (fewer registers, more threadgroup memory).
// The down projection reuses the staging and accumulators once h is formed on chip. When y is
// read only by an add of a tensor of y's type (the transformer residual, z = y + r), the add
// joins the region as the down projection's epilogue (role "residual").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metile/graph/fusion/cost_model.h"
#include "metile/graph/fusion/neighbourhood.h"
#include "metile/graph/graph_ir.h"

namespace metile::graph {

// A region a pattern rule proposes, with what lowering needs to know about it.
struct RuleRegion {
  std::string rule;      // "parallel_epilogue"
  int anchor = -1;       // the down projection
  std::vector<int> ops;  // ascending
  // {"gate", op}, {"up", op}, {"silu", op}, {"multiply", op}, {"down", op}[, {"residual", op}]
  std::vector<std::pair<std::string, int>> roles;
  std::string form;      // "silu(gate) * up" or "up * silu(gate)"
  std::string schedule;  // "register-fused" or "scratch-spilled"
  OpResources resources;
  int64_t bytes_saved = 0;
  int launches_saved = 0;
  int64_t benefit_ns = 0;
};

struct RuleMatches {
  std::vector<RuleRegion> regions;
  std::vector<RejectedRegion> rejected;
};

class ParallelEpilogueRule {
 public:
  static constexpr std::string_view kName = "parallel_epilogue";

  RuleMatches match(const Graph& graph, const CostModel& cost) const;
  // The two schedules' demand for a match whose gate matmul is `gate`.
  static OpResources register_fused(const Graph& graph, int gate);
  static OpResources scratch_spilled(const Graph& graph, int gate);
};

}  // namespace metile::graph
