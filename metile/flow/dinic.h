// Dinic's blocking-flow algorithm: the reference engine, and the one dispatch uses for small
// compiler networks.
#pragma once

#include "metile/flow/deadline.h"
#include "metile/flow/residual_graph.h"

namespace metile::flow {

// Pushes a maximum s-t flow through `g` (in place) and returns its value.
// Throws SolveCancelled once `deadline` passes.
Capacity run_dinic(ResidualGraph& g, int source, int sink, Deadline deadline = {});

}  // namespace metile::flow
