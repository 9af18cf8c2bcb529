// Choosing non-overlapping candidate regions.
//
// Candidates form a conflict graph: two conflict when they share an op (or when the caller
// says so, e.g. because the two kernels would depend on each other). A candidate that
// contains another, conflicts with nothing more and is worth at least as much dominates it;
// dominated candidates are dropped first, which never lowers the optimum. The rest splits
// into connected components:
//  - a bipartite component is solved exactly: maximum-weight independent set, which is a
//    minimum-weight vertex cover complement, found by one s-t min cut
//    (flow::max_weight_independent_set_bipartite);
//  - any other component is weighted set packing, NP-hard in general, and takes a
//    deterministic fallback: greedy by benefit, ties broken by the candidate's ops.
// Both paths return an independent set, so selected regions never overlap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace metile::graph {

struct SelectionCandidate {
  std::vector<int> ops;  // ascending op ids
  int64_t benefit = 0;   // > 0
};

enum class SelectionPath { ExactMinCut, GreedyFallback };
std::string_view selection_path_name(SelectionPath path);  // "exact-min-cut", "greedy-fallback"

struct ConflictComponent {
  std::vector<int> candidates;  // ascending candidate indices
  SelectionPath path = SelectionPath::ExactMinCut;
  std::vector<int> selected;  // ascending candidate indices
  int64_t selected_benefit = 0;
};

struct Selection {
  std::vector<int> selected;  // ascending candidate indices
  std::vector<ConflictComponent> components;
  std::vector<std::string> reasons;  // per candidate: "" when selected, otherwise why not
};

// `extra_conflicts` adds conflicts between candidates that share no op, with a reason each
// (`extra_reasons[i]` for `extra_conflicts[i]`; may be empty).
Selection select_regions(const std::vector<SelectionCandidate>& candidates,
                         const std::vector<std::pair<int, int>>& extra_conflicts = {},
                         const std::vector<std::string>& extra_reasons = {});

}  // namespace metile::graph
