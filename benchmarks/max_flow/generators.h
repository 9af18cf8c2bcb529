// Our own generators for the DIMACS max-flow benchmark families (written from the published
// descriptions, not ported): RMF long/wide (genrmf), Washington random level graphs, an
// AK-style family that defeats one engine on purpose, and compiler-sized fusion networks.
#pragma once

#include <cstdint>
#include <string>

#include "metile/flow/flow_network.h"

namespace metile::flow::bench {

struct Instance {
  std::string family;
  FlowNetwork network;
  int source = 0;
  int sink = 0;
};

// Goldfarb-Grigoriadis RMF: `frames` square a x a grids; in-frame arcs to the 4 neighbours with
// capacity c2 * a * a; each vertex sends one arc of random capacity in [c1, c2] to a random
// vertex of the next frame (a permutation per frame pair). s = first vertex of the first frame,
// t = last vertex of the last frame.
Instance genrmf(const std::string& family, int a, int frames, int c1, int c2, uint64_t seed);

// Washington random level graph: `levels` levels of `width` vertices; every vertex sends
// `degree` arcs of random capacity in [1, max_capacity] to random vertices of the next level;
// s feeds the first level, the last level drains into t (capacities large enough not to bind).
Instance washington_rlg(int width, int levels, int degree, int max_capacity, uint64_t seed);

// AK-style (after Cherkassky and Goldberg's AK idea, our construction): a chain c1..ck fed by
// s with a unit arc from each ci to t, so every Dinic phase finds exactly one augmenting path
// one arc longer than the last (k phases, quadratic), plus a wide layered block with random
// capacities that keeps the network from being a pure chain.
Instance ak_style(int k, uint64_t seed);

// What the fusion planner builds: a DAG-like network of 8-30 vertices, terminal arcs carrying
// launch/materialisation costs and infinite arcs for legality constraints.
Instance compiler_sized(int vertices, uint64_t seed);

}  // namespace metile::flow::bench
