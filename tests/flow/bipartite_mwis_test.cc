#include <gtest/gtest.h>

#include <random>

#include "metile/flow/bipartite_mwis.h"
#include "metile/support/errors.h"

namespace metile::flow {
namespace {

using Edges = std::vector<std::pair<int, int>>;

int64_t weight_of(const std::vector<int>& set, const std::vector<int64_t>& w) {
  int64_t total = 0;
  for (int v : set) total += w[v];
  return total;
}

bool independent(const std::vector<int>& set, int n, const Edges& edges) {
  std::vector<char> in(n, 0);
  for (int v : set) in[v] = 1;
  for (auto [u, v] : edges)
    if (in[u] && in[v]) return false;
  return true;
}

int64_t brute_force_mwis(int n, const std::vector<int64_t>& w, const Edges& edges) {
  int64_t best = 0;
  for (uint32_t mask = 0; mask < (1u << n); ++mask) {
    bool ok = true;
    for (auto [u, v] : edges) ok = ok && !((mask >> u & 1) && (mask >> v & 1));
    if (!ok) continue;
    int64_t total = 0;
    for (int v = 0; v < n; ++v)
      if (mask >> v & 1) total += w[v];
    best = std::max(best, total);
  }
  return best;
}

TEST(BipartiteMwis, ExactAgainstBruteForceOnRandomBipartiteGraphs) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + trial % 14;
    std::vector<int> colour(n);
    std::vector<int64_t> w(n);
    for (int v = 0; v < n; ++v) {
      colour[v] = rng() % 2;
      w[v] = rng() % 4 == 0 ? 0 : static_cast<int64_t>(rng() % 100);
    }
    Edges edges;  // random orientation: the reduction must not rely on (left, right) order
    for (int u = 0; u < n; ++u)
      for (int v = u + 1; v < n; ++v)
        if (colour[u] != colour[v] && rng() % 3 == 0) {
          if (rng() % 2)
            edges.emplace_back(u, v);
          else
            edges.emplace_back(v, u);
        }
    SCOPED_TRACE("trial " + std::to_string(trial));
    ASSERT_TRUE(is_bipartite(n, edges));
    const std::vector<int> chosen = max_weight_independent_set_bipartite(n, w, edges);
    EXPECT_TRUE(std::is_sorted(chosen.begin(), chosen.end()));
    EXPECT_TRUE(independent(chosen, n, edges));
    EXPECT_EQ(weight_of(chosen, w), brute_force_mwis(n, w, edges));
    for (int v : chosen) EXPECT_GT(w[v], 0);
  }
}

TEST(BipartiteMwis, TwoOuterRegionsBeatOneAttractiveMiddle) {
  // The seed's example: a middle region (weight 10) overlaps two outer ones (7 + 6).
  const std::vector<int> chosen =
      max_weight_independent_set_bipartite(3, {7, 10, 6}, {{0, 1}, {1, 2}});
  EXPECT_EQ(chosen, (std::vector<int>{0, 2}));
}

TEST(BipartiteMwis, EmptyAndEdgelessGraphs) {
  EXPECT_TRUE(max_weight_independent_set_bipartite(0, {}, {}).empty());
  EXPECT_EQ(max_weight_independent_set_bipartite(3, {1, 0, 2}, {}), (std::vector<int>{0, 2}));
}

TEST(BipartiteMwis, NonBipartiteInputRaises) {
  EXPECT_FALSE(is_bipartite(3, {{0, 1}, {1, 2}, {2, 0}}));
  EXPECT_THROW(max_weight_independent_set_bipartite(3, {1, 1, 1}, {{0, 1}, {1, 2}, {2, 0}}),
               UserError);
  EXPECT_THROW(max_weight_independent_set_bipartite(2, {1, 1}, {{0, 0}}), UserError);
}

TEST(BipartiteMwis, BadInputRaises) {
  EXPECT_THROW(max_weight_independent_set_bipartite(2, {1}, {}), UserError);
  EXPECT_THROW(max_weight_independent_set_bipartite(2, {1, -1}, {}), UserError);
  EXPECT_THROW(max_weight_independent_set_bipartite(2, {1, 1}, {{0, 2}}), UserError);
}

TEST(BipartiteMwis, IsBipartiteReportsSides) {
  std::vector<int> side;
  ASSERT_TRUE(is_bipartite(4, {{0, 1}, {1, 2}, {2, 3}}, &side));
  EXPECT_NE(side[0], side[1]);
  EXPECT_NE(side[1], side[2]);
  EXPECT_NE(side[2], side[3]);
}

}  // namespace
}  // namespace metile::flow
