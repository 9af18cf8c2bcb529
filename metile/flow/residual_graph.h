// The residual graph every solve builds from an immutable FlowNetwork: arcs grouped by tail in
// compact CSR order, each paired with its reverse arc. One struct per arc keeps the residual
// capacity, head and partner on one cache line, which is what push and augment touch together.
#pragma once

#include <vector>

#include "metile/flow/flow_network.h"

namespace metile::flow {

struct ResidualArc {
  Capacity residual;  // capacity left on this arc
  int head;
  int reverse;  // index of the paired arc (head -> tail)
};

struct ResidualGraph {
  int vertex_count = 0;
  std::vector<int> first;  // arcs of v are [first[v], first[v + 1])
  std::vector<ResidualArc> arcs;

  // Zero-capacity arcs and self loops are dropped (they can never carry flow). Infinite arcs get
  // `infinite_as`, a finite stand-in larger than any finite cut.
  static ResidualGraph build(const FlowNetwork& net, Capacity infinite_as);

  int tail_of(int arc) const;  // binary search; for checks and diagnostics only
};

// Vertices reachable from `source` along arcs with residual capacity (the canonical min-cut side).
std::vector<char> reachable_in_residual(const ResidualGraph& g, int source);

}  // namespace metile::flow
