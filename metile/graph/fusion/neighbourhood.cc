#include "metile/graph/fusion/neighbourhood.h"

#include <algorithm>
#include <deque>

#include "metile/flow/flow_network.h"
#include "metile/graph/fusion/fusion_rules.h"
#include "metile/support/errors.h"

namespace metile::graph {

namespace {

// The producer cone of one anchor, with the per-op terms of its s-t network.
struct Cone {
  int anchor = -1;
  std::vector<int> ops;                 // ascending, anchor last
  std::vector<int> position;            // op id -> index in ops, or -1
  std::vector<int> depth;               // producer edges to the anchor
  std::vector<int64_t> gain, pressure;  // ns; unused for the anchor
  std::vector<int64_t> bytes;           // traffic saved when the op is fused
  std::vector<char> illegal;            // may never join the anchor
  std::vector<std::pair<int, std::string>> excluded;
};

// One solved network: the region (cone positions) and its figures.
struct Cut {
  std::vector<int> region;  // cone positions, ascending
  int64_t benefit = 0;
  int vertices = 0, arcs = 0;
  int64_t value = 0;
  std::string solver;
};

Cone build_cone(const Graph& graph, const Reachability& reach, const CostModel& cost, int anchor,
                int max_depth) {
  Cone cone;
  cone.anchor = anchor;
  std::vector<int> dist(graph.ops().size(), -1);
  dist[anchor] = 0;
  std::deque<int> queue{anchor};
  while (!queue.empty()) {
    int o = queue.front();
    queue.pop_front();
    if (dist[o] == max_depth) continue;
    for (int p : graph.producers(o)) {
      if (dist[p] >= 0) continue;
      dist[p] = dist[o] + 1;
      queue.push_back(p);
    }
  }
  cone.position.assign(graph.ops().size(), -1);
  for (int o = 0; o < static_cast<int>(graph.ops().size()); ++o) {
    if (dist[o] < 0) continue;
    cone.position[o] = static_cast<int>(cone.ops.size());
    cone.ops.push_back(o);
  }

  FusionDomain anchor_domain = fusion_domain(graph, anchor);
  auto on_way_to_anchor = [&](int q) { return q == anchor || reach.reaches(q, anchor); };
  for (int p : cone.ops) {
    cone.depth.push_back(dist[p]);
    int64_t size = graph.spec(graph.op(p).output).bytes();
    int64_t readers = 0;
    bool escapes = graph.is_output(graph.op(p).output);
    std::optional<std::string> why;
    for (int q : graph.consumers(p)) {
      if (!on_way_to_anchor(q)) {
        escapes = true;  // written anyway, for a consumer outside the region
      } else {
        ++readers;
        if (cone.position[q] < 0 && !why)
          why = "its consumer " + op_label(graph, q) + " lies beyond the neighbourhood depth " +
                std::to_string(max_depth);
      }
    }
    if (p != anchor) {
      for (int q : cone.ops)
        if (!why && reach.reaches(p, q)) why = path_violation(graph, p, q);
      if (!why && !domains_compatible(fusion_domain(graph, p), anchor_domain))
        why = op_label(graph, p) + " (" + fusion_domain(graph, p).str() + ") and the anchor " +
              op_label(graph, anchor) + " (" + anchor_domain.str() + ") cannot share a kernel";
    }
    int64_t saved = (escapes ? 0 : size) + readers * size;
    cone.bytes.push_back(saved);
    cone.gain.push_back(cost.launch_ns() + (escapes ? 0 : cost.transfer_ns(size)) +
                        readers * cost.transfer_ns(size));
    cone.pressure.push_back(cost.pressure_ns(cost.resources(graph, p)));
    cone.illegal.push_back(why.has_value());
    if (why) cone.excluded.emplace_back(p, "legality: " + *why);
  }
  return cone;
}

Cut solve(const Graph& graph, const Cone& cone, const std::vector<char>& forced_out) {
  using flow::kInfiniteCapacity;
  const int n = static_cast<int>(cone.ops.size());
  const int source = 0, sink = 1;
  flow::FlowNetwork::Builder net(n + 2);
  int64_t total_gain = 0;
  for (int i = 0; i < n; ++i) {
    int o = cone.ops[i];
    if (o == cone.anchor) {
      net.add_arc(source, i + 2, kInfiniteCapacity);
    } else {
      total_gain += cone.gain[i];
      net.add_arc(source, i + 2, cone.gain[i]);
      bool out = cone.illegal[i] || forced_out[i];
      net.add_arc(i + 2, sink, out ? kInfiniteCapacity : cone.pressure[i]);
    }
    for (int q : graph.consumers(o))
      if (cone.position[q] >= 0) net.add_arc(i + 2, cone.position[q] + 2, kInfiniteCapacity);
  }
  flow::FlowNetwork network = std::move(net).build();
  flow::MaxFlowResult flow = flow::max_flow(network, source, sink);
  METILE_ASSERT(!flow.unbounded, "fusion network for anchor " + std::to_string(cone.anchor) +
                                     " has an infinite s-t path");
  Cut cut;
  cut.vertices = network.vertex_count();
  cut.arcs = network.arc_count();
  cut.value = flow.value;
  cut.solver = flow.solver;
  for (int i = 0; i < n; ++i) {
    if (!flow.source_side[i + 2]) continue;
    cut.region.push_back(i);
    if (cone.ops[i] != cone.anchor) cut.benefit += cone.gain[i] - cone.pressure[i];
  }
  // The closure identity: what the cut leaves on the source side is exactly what it saves.
  METILE_ASSERT(cut.benefit == total_gain - cut.value,
                "min cut " + std::to_string(cut.value) + " disagrees with region benefit " +
                    std::to_string(cut.benefit) + " (total gain " + std::to_string(total_gain) +
                    ")");
  return cut;
}

std::vector<int> op_ids(const Cone& cone, const std::vector<int>& positions) {
  std::vector<int> ids;
  for (int i : positions) ids.push_back(cone.ops[i]);
  return ids;
}

class AnchorSearch {
 public:
  AnchorSearch(const Graph& graph, const CostModel& cost, const Cone& cone, int budget,
               std::vector<RejectedRegion>& rejected)
      : graph_(graph), cost_(cost), cone_(cone), budget_(budget), rejected_(rejected) {}

  Cut run(std::vector<char> forced_out) {
    while (true) {
      ++solves_;
      Cut cut = solve(graph_, cone_, forced_out);
      if (cut.region.size() < 2) return cut;
      std::vector<int> ops = op_ids(cone_, cut.region);
      if (auto clash = first_domain_clash(cut.region)) {
        auto [a, b] = *clash;
        reject(ops, "legality: " + op_label(graph_, cone_.ops[a]) + " (" +
                        fusion_domain(graph_, cone_.ops[a]).str() + ") and " +
                        op_label(graph_, cone_.ops[b]) + " (" +
                        fusion_domain(graph_, cone_.ops[b]).str() + ") cannot share a kernel");
        if (solves_ + 2 <= budget_) {
          // Exact for this clash: try dropping either op and keep the better region.
          std::vector<char> without_a = forced_out, without_b = forced_out;
          without_a[a] = 1;
          without_b[b] = 1;
          Cut first = run(without_a);
          Cut second = run(without_b);
          return second.benefit > first.benefit ? second : first;
        }
        forced_out[cone_.depth[a] >= cone_.depth[b] ? a : b] = 1;
        continue;
      }
      OpResources demand = cost_.region_resources(graph_, ops);
      if (auto over = cost_.resource_violation(demand)) {
        reject(ops, "resource limit: " + *over);
        forced_out[farthest(cut.region)] = 1;
        continue;
      }
      return cut;
    }
  }

  int solves() const { return solves_; }

 private:
  std::optional<std::pair<int, int>> first_domain_clash(const std::vector<int>& region) const {
    for (size_t x = 0; x < region.size(); ++x)
      for (size_t y = x + 1; y < region.size(); ++y)
        if (!domains_compatible(fusion_domain(graph_, cone_.ops[region[x]]),
                                fusion_domain(graph_, cone_.ops[region[y]])))
          return std::make_pair(region[x], region[y]);
    return std::nullopt;
  }

  // The fused producer farthest from the anchor (ties: the later op), the cheapest to drop.
  int farthest(const std::vector<int>& region) const {
    int best = -1;
    for (int i : region)
      if (cone_.ops[i] != cone_.anchor && (best < 0 || cone_.depth[i] >= cone_.depth[best]))
        best = i;
    return best;
  }

  void reject(std::vector<int> ops, std::string reason) {
    rejected_.push_back(RejectedRegion{cone_.anchor, std::move(ops), std::move(reason)});
  }

  const Graph& graph_;
  const CostModel& cost_;
  const Cone& cone_;
  int budget_;
  int solves_ = 0;
  std::vector<RejectedRegion>& rejected_;
};

}  // namespace

CandidateSet enumerate_candidate_regions(const Graph& graph, const Reachability& reach,
                                         const CostModel& cost,
                                         const NeighbourhoodOptions& options) {
  CandidateSet result;
  for (int anchor = 0; anchor < static_cast<int>(graph.ops().size()); ++anchor) {
    if (graph.producers(anchor).empty()) continue;  // nothing to fuse into it
    Cone cone = build_cone(graph, reach, cost, anchor, options.max_depth);
    AnchorSearch search(graph, cost, cone, options.max_solves_per_anchor, result.rejected);
    Cut cut = search.run(std::vector<char>(cone.ops.size(), 0));
    std::vector<int> ops = op_ids(cone, cut.region);
    if (ops.size() < 2 || cut.benefit <= 0) {
      // Say why the direct producers stayed out, so that "nothing fused" is explained.
      std::string why;
      for (const auto& [op, reason] : cone.excluded)
        if (cone.depth[cone.position[op]] == 1) why += (why.empty() ? "" : "; ") + reason;
      if (ops.size() >= 2) why = "no benefit: pressure outweighs the savings";
      if (!why.empty()) {
        std::vector<int> tried{anchor};
        for (int p : graph.producers(anchor)) tried.push_back(p);
        std::sort(tried.begin(), tried.end());
        result.rejected.push_back(RejectedRegion{anchor, tried, why});
      }
      continue;
    }
    CandidateRegion c;
    c.id = static_cast<int>(result.candidates.size());
    c.anchor = anchor;
    c.ops = ops;
    c.benefit_ns = cut.benefit;
    for (int i : cut.region)
      if (cone.ops[i] != anchor) c.bytes_saved += cone.bytes[i];
    c.launches_saved = static_cast<int>(ops.size()) - 1;
    c.resources = cost.region_resources(graph, ops);
    c.network_vertices = cut.vertices;
    c.network_arcs = cut.arcs;
    c.min_cut_ns = cut.value;
    c.solver = cut.solver;
    c.solves = search.solves();
    c.excluded = cone.excluded;
    result.candidates.push_back(std::move(c));
  }
  return result;
}

}  // namespace metile::graph
