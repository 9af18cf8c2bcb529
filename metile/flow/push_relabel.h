// Highest-label push-relabel with the gap and global-relabeling heuristics.
#pragma once

#include "metile/flow/deadline.h"
#include "metile/flow/residual_graph.h"

namespace metile::flow {

// Tuning knobs, exposed so the benchmark can sweep them. A global relabel runs once the relabel
// work since the last one (each relabel costs its degree plus kRelabelBaseCost) exceeds
// alpha * vertices + arcs.
struct PushRelabelTuning {
  double global_relabel_alpha = 6.0;
  double global_relabel_arc_weight = 1.0;
  int relabel_base_cost = 12;
};

// Pushes a maximum s-t flow through `g` (in place; phase 1 finds a maximum preflow, phase 2
// returns the excess that cannot reach t to s) and returns its value. UserError when the
// preflow's excess could overflow 64 bits (the source's arcs sum past INT64_MAX).
// Throws SolveCancelled once `deadline` passes.
Capacity run_push_relabel(ResidualGraph& g, int source, int sink, Deadline deadline = {},
                          const PushRelabelTuning& tuning = {});

}  // namespace metile::flow
