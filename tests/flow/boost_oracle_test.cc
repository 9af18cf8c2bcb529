// Boost Graph Library's push_relabel_max_flow as an independent oracle on larger networks.
#include <gtest/gtest.h>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>

#include "metile/flow/flow_network.h"
#include "metile/flow/solver.h"
#include "tests/flow/flow_test_support.h"

namespace metile::flow {
namespace {

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using BoostGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS, boost::no_property,
    boost::property<
        boost::edge_capacity_t, long long,
        boost::property<boost::edge_residual_capacity_t, long long,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

long long boost_max_flow(const FlowNetwork& net, int s, int t) {
  BoostGraph g(net.vertex_count());
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  for (int a = 0; a < net.arc_count(); ++a) {
    auto e = boost::add_edge(net.arc_from(a), net.arc_to(a), g).first;
    auto r = boost::add_edge(net.arc_to(a), net.arc_from(a), g).first;
    capacity[e] = net.arc_capacity(a);
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  }
  return boost::push_relabel_max_flow(g, s, t);
}

TEST(BoostOracle, EnginesMatchBoostOnLargerRandomNetworks) {
  std::mt19937_64 rng(99);
  for (int trial = 0; trial < 24; ++trial) {
    testing::RandomNetworkSpec spec;
    spec.vertices = 200 + 150 * trial;
    spec.arcs = spec.vertices * (3 + trial % 5);
    spec.max_capacity = trial % 3 == 0 ? 3 : 1000000;
    spec.parallel_percent = 5;
    const FlowNetwork net = testing::random_network(spec, rng);
    const int s = trial % spec.vertices, t = spec.vertices - 1 - trial;
    const long long want = boost_max_flow(net, s, t);
    SCOPED_TRACE("trial " + std::to_string(trial) + ", flow " + std::to_string(want));
    for (SolverKind kind : {SolverKind::Dinic, SolverKind::PushRelabel, SolverKind::Auto}) {
      const MaxFlowResult r = max_flow(net, s, t, kind);
      EXPECT_EQ(r.value, want);
      EXPECT_EQ(cut_capacity(net, r.source_side), want);
      EXPECT_TRUE(r.source_side[s]);
      EXPECT_FALSE(r.source_side[t]);
    }
  }
}

}  // namespace
}  // namespace metile::flow
