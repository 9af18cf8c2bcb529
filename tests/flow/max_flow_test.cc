// Engines against each other and against exhaustive enumeration, plus the edge cases a fusion
// planner produces: zero and infinite capacities, parallel arcs, unreachable sinks.
#include <gtest/gtest.h>

#include "metile/flow/flow_network.h"
#include "metile/flow/solver.h"
#include "metile/support/errors.h"
#include "tests/flow/flow_test_support.h"

namespace metile::flow {
namespace {

using testing::brute_force_min_cut;
using testing::random_network;
using testing::RandomNetworkSpec;

const SolverKind kEngines[] = {SolverKind::Dinic, SolverKind::PushRelabel};

void expect_valid_cut(const FlowNetwork& net, int s, int t, const MaxFlowResult& r) {
  ASSERT_EQ(static_cast<int>(r.source_side.size()), net.vertex_count());
  EXPECT_TRUE(r.source_side[s]);
  if (r.unbounded) return;
  EXPECT_FALSE(r.source_side[t]);
  EXPECT_EQ(cut_capacity(net, r.source_side), r.value);
}

TEST(MaxFlow, EnginesMatchBruteForceOnSmallRandomNetworks) {
  std::mt19937_64 rng(20240601);
  for (int trial = 0; trial < 400; ++trial) {
    RandomNetworkSpec spec;
    spec.vertices = 2 + trial % 11;
    spec.arcs = static_cast<int>(rng() % (spec.vertices * 4 + 1));
    spec.infinite_percent = trial % 3 == 0 ? 8 : 0;
    const FlowNetwork net = random_network(spec, rng);
    const int s = static_cast<int>(rng() % spec.vertices);
    const int t = (s + 1 + static_cast<int>(rng() % (spec.vertices - 1))) % spec.vertices;
    const Capacity want = brute_force_min_cut(net, s, t);
    MaxFlowResult dinic = max_flow(net, s, t, SolverKind::Dinic);
    MaxFlowResult pr = max_flow(net, s, t, SolverKind::PushRelabel);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_EQ(dinic.value, want);
    EXPECT_EQ(pr.value, want);
    EXPECT_EQ(dinic.unbounded, want == kInfiniteCapacity);
    EXPECT_EQ(pr.unbounded, want == kInfiniteCapacity);
    EXPECT_EQ(dinic.source_side, pr.source_side);  // the canonical (minimal) source side
    expect_valid_cut(net, s, t, dinic);
    expect_valid_cut(net, s, t, pr);
    EXPECT_EQ(dinic.solver, "dinic");
    EXPECT_EQ(pr.solver, "push-relabel");
  }
}

TEST(MaxFlow, EnginesAgreeOnMediumRandomNetworks) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    RandomNetworkSpec spec;
    spec.vertices = 40 + trial * 7;
    spec.arcs = spec.vertices * (2 + trial % 6);
    spec.max_capacity = trial % 2 ? 5 : 100000;
    spec.infinite_percent = trial % 4 == 0 ? 3 : 0;
    const FlowNetwork net = random_network(spec, rng);
    const MaxFlowResult dinic = max_flow(net, 0, 1, SolverKind::Dinic);
    const MaxFlowResult pr = max_flow(net, 0, 1, SolverKind::PushRelabel);
    SCOPED_TRACE("trial " + std::to_string(trial));
    EXPECT_EQ(dinic.value, pr.value);
    EXPECT_EQ(dinic.source_side, pr.source_side);
    expect_valid_cut(net, 0, 1, dinic);
    expect_valid_cut(net, 0, 1, pr);
  }
}

TEST(MaxFlow, ClassicExample) {
  // CLRS figure 26.1: max flow 23.
  FlowNetwork::Builder b(6);
  b.add_arc(0, 1, 16);
  b.add_arc(0, 2, 13);
  b.add_arc(2, 1, 4);
  b.add_arc(1, 3, 12);
  b.add_arc(3, 2, 9);
  b.add_arc(2, 4, 14);
  b.add_arc(4, 3, 7);
  b.add_arc(3, 5, 20);
  b.add_arc(4, 5, 4);
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : kEngines) {
    const MaxFlowResult r = max_flow(net, 0, 5, kind);
    EXPECT_EQ(r.value, 23);
    EXPECT_EQ(r.source_side, (std::vector<char>{1, 1, 1, 0, 1, 0}));
  }
}

TEST(MaxFlow, ZeroCapacitiesCarryNothing) {
  FlowNetwork::Builder b(3);
  b.add_arc(0, 1, 0);
  b.add_arc(1, 2, 10);
  b.add_arc(0, 2, 0);
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : kEngines) {
    const MaxFlowResult r = max_flow(net, 0, 2, kind);
    EXPECT_EQ(r.value, 0);
    EXPECT_EQ(r.source_side, (std::vector<char>{1, 0, 0}));
  }
}

TEST(MaxFlow, ParallelArcsAdd) {
  FlowNetwork::Builder b(2);
  b.add_arc(0, 1, 3);
  b.add_arc(0, 1, 4);
  b.add_arc(0, 1, 0);
  b.add_arc(1, 0, 100);  // a backwards arc adds nothing
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : kEngines) EXPECT_EQ(max_flow(net, 0, 1, kind).value, 7);
}

TEST(MaxFlow, UnreachableSinkHasZeroFlowAndReachableSourceSide) {
  FlowNetwork::Builder b(5);
  b.add_arc(0, 1, 5);
  b.add_arc(1, 2, 5);
  b.add_arc(3, 4, 5);  // the sink's component, cut off from s
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : kEngines) {
    const MaxFlowResult r = max_flow(net, 0, 4, kind);
    EXPECT_EQ(r.value, 0);
    EXPECT_FALSE(r.unbounded);
    EXPECT_EQ(r.source_side, (std::vector<char>{1, 1, 1, 0, 0}));
  }
}

TEST(MaxFlow, InfiniteArcsAreNeverCut) {
  // s -inf-> a -3-> t, s -5-> b -inf-> t, a -inf-> b: the cut must take the finite arcs.
  FlowNetwork::Builder b(4);
  const int s = 0, a = 1, c = 2, t = 3;
  b.add_arc(s, a, kInfiniteCapacity);
  b.add_arc(a, t, 3);
  b.add_arc(s, c, 5);
  b.add_arc(c, t, kInfiniteCapacity);
  b.add_arc(a, c, 2);
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : kEngines) {
    const MaxFlowResult r = max_flow(net, s, t, kind);
    EXPECT_EQ(r.value, 10);
    EXPECT_FALSE(r.unbounded);
    EXPECT_EQ(r.source_side, (std::vector<char>{1, 1, 0, 0}));
  }
}

TEST(MaxFlow, AllInfinitePathIsUnbounded) {
  FlowNetwork::Builder b(4);
  b.add_arc(0, 1, kInfiniteCapacity);
  b.add_arc(1, 3, kInfiniteCapacity);
  b.add_arc(0, 2, 4);
  b.add_arc(2, 3, 4);
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : {SolverKind::Dinic, SolverKind::PushRelabel, SolverKind::Auto}) {
    const MaxFlowResult r = max_flow(net, 0, 3, kind);
    EXPECT_TRUE(r.unbounded);
    EXPECT_EQ(r.value, kInfiniteCapacity);
    EXPECT_TRUE(r.source_side[0]);
  }
}

TEST(MaxFlow, CapacitiesAboveInfinityAreInfinite) {
  FlowNetwork::Builder b(2);
  b.add_arc(0, 1, INT64_MAX);
  const FlowNetwork net = std::move(b).build();
  EXPECT_EQ(net.arc_capacity(0), kInfiniteCapacity);
  EXPECT_TRUE(max_flow(net, 0, 1).unbounded);
}

// docs/max_flow.md: anything at or above 2^61 is infinite, the finite capacities sum below it.
TEST(MaxFlow, InfinityStartsAtTwoToThe61) {
  EXPECT_EQ(kInfiniteCapacity, Capacity{1} << 61);
  FlowNetwork::Builder b(2);
  b.add_arc(0, 1, (Capacity{1} << 61) - 1);
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : kEngines) {
    const MaxFlowResult r = max_flow(net, 0, 1, kind);
    EXPECT_FALSE(r.unbounded);
    EXPECT_EQ(r.value, (Capacity{1} << 61) - 1);
  }
}

TEST(MaxFlow, LargeFiniteCapacitiesAreExact) {
  FlowNetwork::Builder b(3);
  const Capacity big = Capacity{1} << 58;
  b.add_arc(0, 1, big);
  b.add_arc(0, 1, big);
  b.add_arc(1, 2, 3 * big);
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : kEngines) EXPECT_EQ(max_flow(net, 0, 2, kind).value, 2 * big);
}

TEST(MaxFlow, FlowIndistinguishableFromInfinityIsRejected) {
  FlowNetwork::Builder b(2);
  for (int i = 0; i < 8; ++i) b.add_arc(0, 1, Capacity{1} << 59);
  const FlowNetwork net = std::move(b).build();
  EXPECT_THROW(max_flow(net, 0, 1, SolverKind::Dinic), UserError);
}

TEST(FlowNetwork, BuilderRejectsBadArcs) {
  FlowNetwork::Builder b(3);
  EXPECT_THROW(b.add_arc(0, 3, 1), UserError);
  EXPECT_THROW(b.add_arc(-1, 2, 1), UserError);
  EXPECT_THROW(b.add_arc(0, 1, -5), UserError);
  EXPECT_EQ(b.add_vertex(), 3);
  b.add_arc(0, 3, 1);
  const FlowNetwork net = std::move(b).build();
  EXPECT_EQ(net.vertex_count(), 4);
  EXPECT_EQ(net.arc_count(), 1);
  EXPECT_EQ(net.arc_from(0), 0);
  EXPECT_EQ(net.arc_to(0), 3);
  EXPECT_EQ(net.arc_capacity(0), 1);
}

TEST(FlowNetwork, BadTerminalsAreUserErrors) {
  FlowNetwork::Builder b(3);
  b.add_arc(0, 1, 1);
  const FlowNetwork net = std::move(b).build();
  for (SolverKind kind : {SolverKind::Dinic, SolverKind::PushRelabel, SolverKind::Auto}) {
    EXPECT_THROW(max_flow(net, 0, 0, kind), UserError);
    EXPECT_THROW(max_flow(net, 0, 3, kind), UserError);
    EXPECT_THROW(max_flow(net, -1, 2, kind), UserError);
  }
}

TEST(FlowNetwork, TopologyHashSeesCapacitiesAndArcs) {
  auto make = [](Capacity c, int head) {
    FlowNetwork::Builder b(3);
    b.add_arc(0, 1, 4);
    b.add_arc(1, head, c);
    return std::move(b).build();
  };
  EXPECT_EQ(make(5, 2).topology_hash(), make(5, 2).topology_hash());
  EXPECT_NE(make(5, 2).topology_hash(), make(6, 2).topology_hash());
  EXPECT_NE(make(5, 2).topology_hash(), make(5, 0).topology_hash());
}

TEST(MaxFlow, SolvingTwiceGivesTheSameAnswer) {
  // The network is immutable: every solve starts from a fresh residual graph.
  std::mt19937_64 rng(3);
  const FlowNetwork net = random_network({.vertices = 50, .arcs = 300}, rng);
  for (SolverKind kind : kEngines) {
    const MaxFlowResult a = max_flow(net, 0, 1, kind), b = max_flow(net, 0, 1, kind);
    EXPECT_EQ(a.value, b.value);
    EXPECT_EQ(a.source_side, b.source_side);
  }
}

}  // namespace
}  // namespace metile::flow
