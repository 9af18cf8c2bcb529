// Candidate regions: one s-t cut per producer/consumer neighbourhood.
//
// The neighbourhood of an anchor op is its producer cone (ancestors up to a depth). Each op v
// of the cone other than the anchor becomes a vertex with
//   s -> v  capacity gain(v): launch + the bytes of v's result written and read back, at the
//           target bandwidth. Cut when v is kept separate.
//   v -> t  capacity pressure(v): v's register / threadgroup-memory share. Cut when v is fused.
//   s -> anchor, p -> q for every dataflow edge, and v -> t for producers that may not join
//           the anchor: infinite. They encode convexity (a fused producer brings every consumer
//           on its way to the anchor) and legality (fusion_rules.h).
// The min cut's source side is the candidate region: it maximises the sum of
// gain - pressure over the fused producers (a maximum-weight closure). Rules that are not
// pairwise (one domain per region, resource limits) are checked on the cut: a domain clash
// branches on which op to drop, a resource overrun drops the op farthest from the anchor,
// and the network is solved again.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "metile/graph/fusion/cost_model.h"
#include "metile/graph/graph_ir.h"
#include "metile/graph/reachability.h"

namespace metile::graph {

struct CandidateRegion {
  int id = -1;               // index in the candidate list
  int anchor = -1;           // the op whose producer cone this came from; every op reaches it
  std::vector<int> ops;      // ascending (topological)
  int64_t benefit_ns = 0;    // sum of gain - pressure over the fused producers
  int64_t bytes_saved = 0;   // device-memory traffic avoided
  int launches_saved = 0;    // ops.size() - 1
  OpResources resources;     // demand of the fused kernel
  int network_vertices = 0;  // of the last network solved for this anchor
  int network_arcs = 0;
  int64_t min_cut_ns = 0;
  std::string solver;  // which max-flow engine solved it
  int solves = 0;      // networks solved for this anchor
  // Producers in the cone that legality kept out, with the broken rule.
  std::vector<std::pair<int, std::string>> excluded;
  // Set when a pattern rule (parallel_epilogue_rule.h) proposed the region instead of a cut.
  std::string rule;
  std::vector<std::pair<std::string, int>> roles;  // role -> op id
  std::string form, schedule;
};

// A region the planner considered and did not propose, with why.
struct RejectedRegion {
  int anchor = -1;
  std::vector<int> ops;
  std::string reason;
};

struct NeighbourhoodOptions {
  int max_depth = 8;               // producer edges from the anchor
  int max_solves_per_anchor = 32;  // domain-clash branching budget; beyond it, drop greedily
};

struct CandidateSet {
  std::vector<CandidateRegion> candidates;  // ordered by anchor
  std::vector<RejectedRegion> rejected;
};

CandidateSet enumerate_candidate_regions(const Graph& graph, const Reachability& reach,
                                         const CostModel& cost,
                                         const NeighbourhoodOptions& options = {});

}  // namespace metile::graph
