// plan_graph_fusion: choose the kernels of a Graph.
//
//   0. discover_attention (discovery/discover_attention.h): certified rewrites of the graph;
//   1. enumerate_candidate_regions (neighbourhood.h): one s-t min cut per producer cone, and
//      the regions of the pattern rules (ParallelEpilogueRule, parallel_epilogue_rule.h);
//   2. select_regions (conflict_selection.h): non-overlapping candidates, exact on bipartite
//      conflict components, benefit-ordered fallback elsewhere;
//   3. every op no selected region covers becomes its own kernel, so each op is in exactly
//      one region, and regions are listed in an order that respects their dependencies.
//
// Planning is deterministic: the same graph and target give the same plan and report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/graph/discovery/discover_attention.h"
#include "metile/graph/fusion/conflict_selection.h"
#include "metile/graph/fusion/neighbourhood.h"
#include "metile/graph/graph_ir.h"
#include "metile/target/target.h"

namespace metile::graph {

// One kernel of the plan.
struct FusedRegion {
  int id = -1;
  std::vector<std::string> ops;  // op kind names in topological order: {"add", "rms_norm"}
  std::vector<int> op_ids;       // the same ops' ids
  std::vector<int> inputs;       // value ids read from outside the region, first use first
  std::vector<int> outputs;      // value ids written: used outside the region or graph outputs
  int64_t bytes_saved = 0;       // estimated device-memory traffic avoided by fusing
  int launches_saved = 0;
  int64_t benefit_ns = 0;
  int candidate = -1;  // the candidate region it came from; -1 for a single op
  // The region record for lowering: the rule that formed it ("parallel_epilogue", or
  // "flash_attention" for a discovered node), each op's role, the epilogue's form and the
  // schedule that fits the target. Empty for ordinary regions.
  std::string rule;
  std::vector<std::pair<std::string, int>> roles;
  std::string form, schedule;
  int rewrite = -1;  // flash_attention: index into FusionPlan::rewrites
};

struct FusionPlan {
  std::string target;
  Graph graph;  // the planned graph: the input after discovery's rewrites; ids refer to it
  std::vector<AttentionRewrite> rewrites;          // applied, with their certificates
  std::vector<RejectedRewrite> rejected_rewrites;  // chains kept, with why
  std::vector<RejectedRegion> rule_rejected;       // pattern-rule matches refused, with why
  std::vector<FusedRegion> regions;                // dependency order
  std::vector<int> region_of_op;                   // op id -> region id
  std::vector<CandidateRegion> candidates;         // every candidate the cuts proposed
  std::vector<ConflictComponent> components;       // how each conflict component was solved
  std::vector<std::string> candidate_reasons;      // per candidate: "" if selected, else why not
  std::vector<RejectedRegion> rejected;            // regions the cuts refused (legality, resources)
  std::vector<std::string> op_labels;              // op id -> "%3 = add", for the report
  std::vector<std::string> value_names;            // value id -> "%values", for the report

  int64_t bytes_saved() const;
  int launches_saved() const;
  // JSON report: regions with their savings, candidates, conflict components with the path
  // each took, and why every rejected alternative lost.
  std::string explain() const;
};

struct FusionOptions {
  NeighbourhoodOptions neighbourhood;
  DiscoveryOptions discovery;
  bool parallel_epilogue = true;  // the default pattern rule (parallel_epilogue_rule.h)
};

FusionPlan plan_graph_fusion(const Graph& graph,
                             const target::Target& target = target::default_target(),
                             const FusionOptions& options = {});

}  // namespace metile::graph
