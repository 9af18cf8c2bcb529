#include "benchmarks/max_flow/external_solvers.h"

#include <lemon/preflow.h>
#include <lemon/static_graph.h>
#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/boykov_kolmogorov_max_flow.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <numeric>

namespace metile::flow::bench {

namespace {

Capacity finite_capacity(const FlowNetwork& net, int arc) {
  const Capacity c = net.arc_capacity(arc);
  if (c < kInfiniteCapacity) return c;
  Capacity total = 1;
  for (int a = 0; a < net.arc_count(); ++a)
    if (net.arc_capacity(a) < kInfiniteCapacity) total += net.arc_capacity(a);
  return total;
}

using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
using BoostGraph = boost::adjacency_list<
    boost::vecS, boost::vecS, boost::directedS,
    boost::property<
        boost::vertex_color_t, boost::default_color_type,
        boost::property<boost::vertex_distance_t, long,
                        boost::property<boost::vertex_predecessor_t, Traits::edge_descriptor>>>,
    boost::property<
        boost::edge_capacity_t, long long,
        boost::property<boost::edge_residual_capacity_t, long long,
                        boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;

class BoostSolver : public ExternalSolver {
 public:
  BoostSolver(const Instance& in, bool kolmogorov)
      : graph_(in.network.vertex_count()), s_(in.source), t_(in.sink), kolmogorov_(kolmogorov) {
    auto capacity = boost::get(boost::edge_capacity, graph_);
    auto reverse = boost::get(boost::edge_reverse, graph_);
    for (int a = 0; a < in.network.arc_count(); ++a) {
      auto e = boost::add_edge(in.network.arc_from(a), in.network.arc_to(a), graph_).first;
      auto r = boost::add_edge(in.network.arc_to(a), in.network.arc_from(a), graph_).first;
      capacity[e] = finite_capacity(in.network, a);
      capacity[r] = 0;
      reverse[e] = r;
      reverse[r] = e;
    }
  }
  std::string name() const override {
    return kolmogorov_ ? "bgl-boykov-kolmogorov" : "bgl-push-relabel";
  }
  Capacity solve() override {
    if (kolmogorov_) return boost::boykov_kolmogorov_max_flow(graph_, s_, t_);
    return boost::push_relabel_max_flow(graph_, s_, t_);
  }

 private:
  BoostGraph graph_;
  int s_, t_;
  bool kolmogorov_;
};

class LemonPreflow : public ExternalSolver {
 public:
  explicit LemonPreflow(const Instance& in) {
    const FlowNetwork& net = in.network;
    std::vector<int> order(net.arc_count());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int x, int y) { return net.arc_from(x) < net.arc_from(y); });
    std::vector<std::pair<int, int>> arcs;
    arcs.reserve(order.size());
    for (int a : order) arcs.emplace_back(net.arc_from(a), net.arc_to(a));
    graph_.build(net.vertex_count(), arcs.begin(), arcs.end());
    capacity_ = std::make_unique<lemon::StaticDigraph::ArcMap<long long>>(graph_);
    for (size_t i = 0; i < order.size(); ++i)
      (*capacity_)[graph_.arc(static_cast<int>(i))] = finite_capacity(net, order[i]);
    s_ = graph_.node(in.source);
    t_ = graph_.node(in.sink);
  }
  std::string name() const override { return "lemon-preflow"; }
  // Phase 1 only: the flow value and a minimum cut, the same deliverable as metile's solve.
  Capacity solve() override {
    lemon::Preflow<lemon::StaticDigraph, lemon::StaticDigraph::ArcMap<long long>> preflow(
        graph_, *capacity_, s_, t_);
    preflow.runMinCut();
    return preflow.flowValue();
  }

 private:
  lemon::StaticDigraph graph_;
  std::unique_ptr<lemon::StaticDigraph::ArcMap<long long>> capacity_;
  lemon::StaticDigraph::Node s_, t_;
};

}  // namespace

std::vector<std::unique_ptr<ExternalSolver>> make_external_solvers(const Instance& instance) {
  std::vector<std::unique_ptr<ExternalSolver>> out;
  out.push_back(std::make_unique<BoostSolver>(instance, false));
  out.push_back(std::make_unique<BoostSolver>(instance, true));
  out.push_back(std::make_unique<LemonPreflow>(instance));
  return out;
}

}  // namespace metile::flow::bench
