// Exact maximum-weight independent set on bipartite conflict graphs (seed 000: a bipartite
// conflict component is selected globally by one s-t cut).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace metile::flow {

// Exact maximum-weight independent set of a bipartite graph (weights >= 0) via minimum-weight
// vertex cover -> one s-t cut (benefit = terminal capacity, conflict edge = infinite arc).
// Returns the chosen vertices in increasing order. Throws UserError if the graph is not bipartite.
std::vector<int> max_weight_independent_set_bipartite(
    int vertex_count, const std::vector<int64_t>& weights,
    const std::vector<std::pair<int, int>>& edges);

// True if the graph is 2-colourable; when side is given, fills it with 0/1 per vertex.
bool is_bipartite(int vertex_count, const std::vector<std::pair<int, int>>& edges,
                  std::vector<int>* side = nullptr);

}  // namespace metile::flow
