// What every engine does before its algorithm runs: check the terminals, detect an all-infinite
// s-t path (unbounded flow), and pick the finite stand-in for infinite arcs.
#pragma once

#include <optional>
#include <string>

#include "metile/flow/flow_network.h"

namespace metile::flow {

// UserError unless source and sink are distinct vertices of `net`.
void validate_terminals(const FlowNetwork& net, int source, int sink);

// The result of a solve whose s-t flow is unbounded (an s-t path of infinite arcs), or nullopt.
// No finite cut exists then; source_side marks what s reaches along positive-capacity arcs.
std::optional<MaxFlowResult> unbounded_result(const FlowNetwork& net, int source, int sink,
                                              const std::string& solver);

// One more than the sum of all finite capacities: an infinite arc with this capacity can never
// be saturated by a maximum flow when no all-infinite path exists. UserError when the finite
// capacities alone reach kInfiniteCapacity (their flow could not be told from infinity).
Capacity finite_stand_in_for_infinity(const FlowNetwork& net);

}  // namespace metile::flow
