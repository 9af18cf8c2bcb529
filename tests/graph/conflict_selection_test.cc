// select_regions on hand-made candidates, so that the conflict graph is exactly known.
#include <gtest/gtest.h>

#include "metile/graph/fusion/conflict_selection.h"
#include "metile/support/errors.h"

namespace metile::graph {
namespace {

bool overlap_free(const std::vector<SelectionCandidate>& cands, const std::vector<int>& chosen) {
  std::vector<int> seen;
  for (int c : chosen)
    for (int op : cands[c].ops) {
      if (std::find(seen.begin(), seen.end(), op) != seen.end()) return false;
      seen.push_back(op);
    }
  return true;
}

TEST(ConflictSelection, ExactPathPicksTwoOuterRegionsOverAttractiveMiddle) {
  // outer {0,1} - middle {1,2} - outer {2,3}: a path of three conflicts, weights 5, 8, 5.
  std::vector<SelectionCandidate> cands{{{0, 1}, 5}, {{1, 2}, 8}, {{2, 3}, 5}};
  Selection s = select_regions(cands);
  EXPECT_EQ(s.selected, (std::vector<int>{0, 2}));
  ASSERT_EQ(s.components.size(), 1u);
  EXPECT_EQ(s.components[0].path, SelectionPath::ExactMinCut);
  EXPECT_EQ(s.components[0].candidates, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.components[0].selected_benefit, 10);
  EXPECT_EQ(s.reasons[0], "");
  EXPECT_EQ(s.reasons[1],
            "conflicts with candidate 0, 2 whose selection gives larger total benefit (10 ns vs "
            "8 ns with this candidate)");
}

TEST(ConflictSelection, ExactPathKeepsTheMiddleWhenItIsWorthMore) {
  std::vector<SelectionCandidate> cands{{{0, 1}, 5}, {{1, 2}, 11}, {{2, 3}, 5}};
  EXPECT_EQ(select_regions(cands).selected, std::vector<int>{1});
}

TEST(ConflictSelection, TriangleTakesTheGreedyFallbackAndStaysDisjoint) {
  // {0,1}, {1,2}, {0,2} pairwise share an op: an odd cycle, not bipartite.
  std::vector<SelectionCandidate> cands{{{0, 1}, 5}, {{1, 2}, 7}, {{0, 2}, 6}, {{7, 8}, 3}};
  Selection s = select_regions(cands);
  ASSERT_EQ(s.components.size(), 2u);
  EXPECT_EQ(s.components[0].candidates, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(s.components[0].path, SelectionPath::GreedyFallback);
  EXPECT_EQ(s.components[0].selected, std::vector<int>{1});
  EXPECT_EQ(s.components[1].path, SelectionPath::ExactMinCut);  // the lone candidate
  EXPECT_EQ(s.selected, (std::vector<int>{1, 3}));
  EXPECT_TRUE(overlap_free(cands, s.selected));
  EXPECT_EQ(s.reasons[2],
            "conflicts with candidate 1, chosen first by the benefit-ordered fallback "
            "(non-bipartite component)");
  EXPECT_EQ(selection_path_name(s.components[0].path), "greedy-fallback");
}

TEST(ConflictSelection, FallbackBreaksBenefitTiesByOps) {
  std::vector<SelectionCandidate> cands{{{1, 2}, 6}, {{0, 1}, 6}, {{0, 2}, 6}};
  Selection s = select_regions(cands);
  EXPECT_EQ(s.components[0].path, SelectionPath::GreedyFallback);
  EXPECT_EQ(s.selected, std::vector<int>{1});  // ops {0, 1} sort first
}

TEST(ConflictSelection, DominatedCandidateIsDroppedFirst) {
  // {0,1} lies inside {0,1,2}, which conflicts with nothing more and is worth more.
  std::vector<SelectionCandidate> cands{{{0, 1}, 4}, {{0, 1, 2}, 9}, {{1, 5}, 6}};
  Selection s = select_regions(cands);
  EXPECT_EQ(s.reasons[0],
            "dominated by candidate 1: contains its ops, conflicts with nothing more, benefit 9 "
            "ns >= 4 ns");
  ASSERT_EQ(s.components.size(), 1u);
  EXPECT_EQ(s.components[0].candidates, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.selected, std::vector<int>{1});
}

TEST(ConflictSelection, ContainingCandidateWithMoreConflictsDoesNotDominate) {
  // {0,1,2} also conflicts with {2,3}; dropping {0,1} would lose the optimum {0,1} + {2,3}.
  std::vector<SelectionCandidate> cands{{{0, 1}, 4}, {{0, 1, 2}, 6}, {{2, 3}, 5}};
  Selection s = select_regions(cands);
  EXPECT_EQ(s.reasons[0], "");
  EXPECT_EQ(s.selected, (std::vector<int>{0, 2}));
}

TEST(ConflictSelection, ExtraConflictsAreRespectedAndExplained) {
  std::vector<SelectionCandidate> cands{{{0, 1}, 5}, {{2, 3}, 4}};
  Selection s = select_regions(cands, {{0, 1}}, {"kernel dependency cycle"});
  EXPECT_EQ(s.selected, std::vector<int>{0});
  EXPECT_EQ(s.reasons[1],
            "conflicts with candidate 0 (kernel dependency cycle) whose selection gives larger "
            "total benefit (5 ns vs 4 ns with this candidate)");
}

TEST(ConflictSelection, RejectsUnorderedOpsAndSkipsWorthlessCandidates) {
  EXPECT_THROW(select_regions({{{2, 1}, 5}}), UserError);
  Selection s = select_regions({{{0, 1}, 0}, {{2, 3}, 1}});
  EXPECT_EQ(s.reasons[0], "no benefit");
  EXPECT_EQ(s.selected, std::vector<int>{1});
}

TEST(ConflictSelection, LargerBipartiteComponentMatchesBruteForce) {
  // A 2x3 grid of conflicts (bipartite, with cycles): one op per grid edge.
  //   a - b - c
  //   |   |   |
  //   d - e - f
  std::vector<SelectionCandidate> cands{{{0, 4}, 7}, {{0, 1, 5}, 3}, {{1, 6}, 9},
                                        {{2, 4}, 4}, {{2, 3, 5}, 8}, {{3, 6}, 2}};
  Selection s = select_regions(cands);
  ASSERT_EQ(s.components.size(), 1u);
  EXPECT_EQ(s.components[0].path, SelectionPath::ExactMinCut);
  int64_t best = 0;
  for (int mask = 0; mask < (1 << cands.size()); ++mask) {
    std::vector<int> chosen;
    int64_t total = 0;
    for (int i = 0; i < static_cast<int>(cands.size()); ++i)
      if (mask >> i & 1) chosen.push_back(i), total += cands[i].benefit;
    if (overlap_free(cands, chosen)) best = std::max(best, total);
  }
  EXPECT_EQ(s.components[0].selected_benefit, best);
  EXPECT_TRUE(overlap_free(cands, s.selected));
}

}  // namespace
}  // namespace metile::graph
