// Shared helpers for the flow tests: random networks and an exhaustive min-cut oracle.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "metile/flow/flow_network.h"

namespace metile::flow::testing {

struct RandomNetworkSpec {
  int vertices = 8;
  int arcs = 20;
  int max_capacity = 20;
  int zero_percent = 10;      // arcs with capacity 0
  int infinite_percent = 0;   // arcs with kInfiniteCapacity
  int parallel_percent = 10;  // arcs followed by a parallel copy
};

inline FlowNetwork random_network(const RandomNetworkSpec& spec, std::mt19937_64& rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  FlowNetwork::Builder b(spec.vertices);
  for (int i = 0; i < spec.arcs; ++i) {
    const int u = pick(0, spec.vertices - 1), v = pick(0, spec.vertices - 1);
    Capacity c = pick(1, spec.max_capacity);
    if (pick(0, 99) < spec.zero_percent) c = 0;
    if (pick(0, 99) < spec.infinite_percent) c = kInfiniteCapacity;
    b.add_arc(u, v, c);
    if (pick(0, 99) < spec.parallel_percent) b.add_arc(u, v, pick(0, spec.max_capacity));
  }
  return std::move(b).build();
}

// Minimum s-t cut capacity by enumerating every vertex subset that holds s and not t
// (saturating at kInfiniteCapacity). Exponential: for at most ~14 vertices.
inline Capacity brute_force_min_cut(const FlowNetwork& net, int s, int t) {
  const int n = net.vertex_count();
  Capacity best = kInfiniteCapacity;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    if (!(mask >> s & 1) || (mask >> t & 1)) continue;
    Capacity cut = 0;
    for (int a = 0; a < net.arc_count(); ++a)
      if ((mask >> net.arc_from(a) & 1) && !(mask >> net.arc_to(a) & 1))
        cut = std::min(kInfiniteCapacity, cut + net.arc_capacity(a));
    best = std::min(best, cut);
  }
  return best;
}

}  // namespace metile::flow::testing
