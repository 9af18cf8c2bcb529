#include "metile/flow/residual_graph.h"

#include <algorithm>

namespace metile::flow {

ResidualGraph ResidualGraph::build(const FlowNetwork& net, Capacity infinite_as) {
  ResidualGraph g;
  const int n = net.vertex_count();
  const int m = net.arc_count();
  g.vertex_count = n;
  g.first.assign(n + 1, 0);
  auto carries_flow = [&](int a) {
    return net.arc_capacity(a) > 0 && net.arc_from(a) != net.arc_to(a);
  };
  for (int a = 0; a < m; ++a) {
    if (!carries_flow(a)) continue;
    ++g.first[net.arc_from(a) + 1];
    ++g.first[net.arc_to(a) + 1];
  }
  for (int v = 0; v < n; ++v) g.first[v + 1] += g.first[v];
  g.arcs.resize(g.first[n]);
  std::vector<int> next(g.first.begin(), g.first.end() - 1);
  for (int a = 0; a < m; ++a) {
    if (!carries_flow(a)) continue;
    const int u = net.arc_from(a), v = net.arc_to(a);
    Capacity c = net.arc_capacity(a);
    if (c >= kInfiniteCapacity) c = infinite_as;
    const int fwd = next[u]++, bwd = next[v]++;
    g.arcs[fwd] = ResidualArc{c, v, bwd};
    g.arcs[bwd] = ResidualArc{0, u, fwd};
  }
  return g;
}

int ResidualGraph::tail_of(int arc) const {
  return static_cast<int>(std::upper_bound(first.begin(), first.end(), arc) - first.begin()) - 1;
}

std::vector<char> reachable_in_residual(const ResidualGraph& g, int source) {
  std::vector<char> seen(g.vertex_count, 0);
  std::vector<int> queue;
  queue.reserve(g.vertex_count);
  seen[source] = 1;
  queue.push_back(source);
  for (size_t i = 0; i < queue.size(); ++i) {
    const int v = queue[i];
    for (int a = g.first[v]; a < g.first[v + 1]; ++a) {
      const ResidualArc& arc = g.arcs[a];
      if (arc.residual > 0 && !seen[arc.head]) {
        seen[arc.head] = 1;
        queue.push_back(arc.head);
      }
    }
  }
  return seen;
}

}  // namespace metile::flow
