// Maximum-weight independent set on a bipartite graph = complement of a minimum-weight vertex
// cover, and the cover is a minimum s-t cut of: s -> left vertex (its weight), right vertex -> t
// (its weight), left -> right (infinite) per conflict edge. A finite cut must cover every edge.
#include "metile/flow/bipartite_mwis.h"

#include <string>

#include "metile/flow/flow_network.h"
#include "metile/support/errors.h"

namespace metile::flow {

bool is_bipartite(int vertex_count, const std::vector<std::pair<int, int>>& edges,
                  std::vector<int>* side) {
  std::vector<std::vector<int>> adjacent(vertex_count);
  for (const auto& [u, v] : edges) {
    if (u < 0 || u >= vertex_count || v < 0 || v >= vertex_count)
      throw UserError("is_bipartite: edge (" + std::to_string(u) + ", " + std::to_string(v) +
                      ") names a vertex outside [0, " + std::to_string(vertex_count) + ")");
    if (u == v) return false;  // a self loop is an odd cycle
    adjacent[u].push_back(v);
    adjacent[v].push_back(u);
  }
  std::vector<int> colour(vertex_count, -1), stack;
  for (int root = 0; root < vertex_count; ++root) {
    if (colour[root] != -1) continue;
    colour[root] = 0;
    stack.push_back(root);
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      for (int v : adjacent[u]) {
        if (colour[v] == colour[u]) return false;
        if (colour[v] == -1) {
          colour[v] = 1 - colour[u];
          stack.push_back(v);
        }
      }
    }
  }
  if (side) *side = std::move(colour);
  return true;
}

std::vector<int> max_weight_independent_set_bipartite(
    int vertex_count, const std::vector<int64_t>& weights,
    const std::vector<std::pair<int, int>>& edges) {
  if (vertex_count < 0)
    throw UserError("bipartite MWIS: vertex count must be >= 0, got " +
                    std::to_string(vertex_count));
  if (static_cast<int>(weights.size()) != vertex_count)
    throw UserError("bipartite MWIS: " + std::to_string(weights.size()) + " weights for " +
                    std::to_string(vertex_count) + " vertices");
  for (int v = 0; v < vertex_count; ++v)
    if (weights[v] < 0)
      throw UserError("bipartite MWIS: vertex " + std::to_string(v) + " has negative weight " +
                      std::to_string(weights[v]));
  std::vector<int> side;
  if (!is_bipartite(vertex_count, edges, &side))
    throw UserError(
        "bipartite MWIS: the conflict graph has an odd cycle (not bipartite); "
        "weighted set packing on it is not one s-t cut");

  FlowNetwork::Builder builder(vertex_count);
  const int s = builder.add_vertex(), t = builder.add_vertex();
  for (int v = 0; v < vertex_count; ++v) {
    if (side[v] == 0)
      builder.add_arc(s, v, weights[v]);
    else
      builder.add_arc(v, t, weights[v]);
  }
  for (const auto& [u, v] : edges) {
    if (side[u] == 0)
      builder.add_arc(u, v, kInfiniteCapacity);
    else
      builder.add_arc(v, u, kInfiniteCapacity);
  }
  const MaxFlowResult cut = max_flow(std::move(builder).build(), s, t);
  METILE_ASSERT(!cut.unbounded, "bipartite MWIS network has no all-infinite s-t path");

  // Left vertices on the source side and right vertices on the sink side are uncovered, hence
  // independent. Zero-weight vertices add nothing and are left out, so the answer is canonical.
  std::vector<int> chosen;
  for (int v = 0; v < vertex_count; ++v) {
    const bool uncovered = side[v] == 0 ? cut.source_side[v] : !cut.source_side[v];
    if (uncovered && weights[v] > 0) chosen.push_back(v);
  }
  return chosen;
}

}  // namespace metile::flow
