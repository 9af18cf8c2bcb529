// The order-interleaved tournament on synthetic times: the per-round headroom rule, two round
// wins deciding, the stopping bounds, and that none of its shortcuts changes a decision at any
// headroom.
#include "metile/tune/tournament.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>
#include <vector>

namespace metile::tune {
namespace {

constexpr double kTenPercent = 0.10;
constexpr double kFivePercent = 0.05;

TEST(Tournament, AChallengerNeedsTheHeadroomInItsRound) {
  EXPECT_EQ(round_winner({1.0, 0.95}, kTenPercent), 0u);
  EXPECT_EQ(round_winner({1.0, 0.92}, kTenPercent), 0u);
  EXPECT_EQ(round_winner({1.0, 0.90}, kTenPercent), 1u);
  EXPECT_EQ(round_winner({1.0, 0.5}, kTenPercent), 1u);
  EXPECT_EQ(round_winner({1.0, 2.0}, kTenPercent), 0u);
  EXPECT_EQ(round_winner({1.0, 0.8, 0.6}, kTenPercent), 2u);  // the fastest qualified challenger
  EXPECT_EQ(round_winner({1.0, INFINITY}, kTenPercent), 0u);  // stopped: lost
  EXPECT_EQ(round_winner({1.0, 0.99}, 0.0), 1u);
  EXPECT_EQ(round_winner({1.0, 1.0}, 0.0), 0u);  // no headroom: a tie still goes to the reference
}

TEST(Tournament, FivePercentHeadroomDecidesWhereTenPercentDoesNot) {
  EXPECT_EQ(round_winner({1.0, 0.93}, kTenPercent), 0u);
  EXPECT_EQ(round_winner({1.0, 0.93}, kFivePercent), 1u);
  EXPECT_EQ(round_winner({1.0, 0.96}, kFivePercent), 0u);
  const std::vector<std::vector<double>> times(kTournamentRounds, {1.0, 0.93});
  EXPECT_EQ(tournament_winner_from_full_times(times, kTenPercent), 0u);
  EXPECT_EQ(tournament_winner_from_full_times(times, kFivePercent), 1u);
}

// Synthetic entrants for the tournament logic: entrant i takes times[round][i] seconds in that
// round; a trial under a shorter limit is stopped there. Records every limit and the time spent.
struct SyntheticEntrants {
  std::vector<std::vector<double>> times;  // [round][entrant]
  struct Call {
    size_t entrant;
    int round;
    double limit;
  };
  std::vector<Call> calls;
  double spent = 0;

  TournamentRunner runner() {
    return [this](size_t i, int round, double limit) {
      calls.push_back({i, round, limit});
      const double t = times.at(round).at(i);
      TournamentTrial trial;
      if (t <= limit) {
        trial.seconds = t;
        spent += t;
      } else {
        trial.status = TournamentTrial::Status::Stopped;
        spent += limit;
      }
      return trial;
    };
  }
};

SyntheticEntrants constant_times(std::vector<double> per_entrant) {
  SyntheticEntrants e;
  e.times.assign(kTournamentRounds, per_entrant);
  return e;
}

TEST(Tournament, ADecidedTournamentSkipsItsLastRound) {
  for (const auto& [dinic, challenger, winner] :
       {std::tuple{10.0, 2.6, size_t{1}}, std::tuple{1.0, 5.0, size_t{0}},
        std::tuple{1.0, 0.95, size_t{0}}, std::tuple{1.0, 0.9, size_t{1}}}) {
    SyntheticEntrants e = constant_times({dinic, challenger});
    const TournamentRecord r = play_tournament(2, e.runner(), kTenPercent);
    EXPECT_EQ(r.winner, winner) << dinic << " vs " << challenger;
    ASSERT_EQ(r.round_winners.size(), 2u);
    EXPECT_EQ(r.round_winners[0], winner);
    EXPECT_EQ(r.round_winners[1], winner);
    for (const auto& call : e.calls) EXPECT_LT(call.round, 2);
  }
}

TEST(Tournament, ASplitTournamentPlaysTheThirdRound) {
  SyntheticEntrants e;
  e.times = {{1.0, 0.5}, {1.0, 2.0}, {1.0, 0.8}};  // push-relabel, Dinic, push-relabel
  TournamentRecord r = play_tournament(2, e.runner(), kTenPercent);
  EXPECT_EQ(r.round_winners, (std::vector<size_t>{1, 0, 1}));
  EXPECT_EQ(r.winner, 1u);
  e = {};
  e.times = {{1.0, 0.5}, {1.0, 2.0}, {1.0, 0.95}};  // the last round lacks the headroom
  r = play_tournament(2, e.runner(), kTenPercent);
  EXPECT_EQ(r.round_winners, (std::vector<size_t>{1, 0, 0}));
  EXPECT_EQ(r.winner, 0u);
}

TEST(Tournament, LosersAreStoppedAtTheExactHeadroomBounds) {
  // Round 1 (Dinic first): Dinic completes within the first provisional limit, so
  // push-relabel's limit is Dinic's time / 1.1, and it is stopped there.
  SyntheticEntrants e = constant_times({2e-4, 1e-3});
  TournamentRecord r = play_tournament(2, e.runner(), kTenPercent, 1e-3);
  ASSERT_GE(e.calls.size(), 2u);
  EXPECT_EQ(e.calls[0].entrant, 0u);
  EXPECT_DOUBLE_EQ(e.calls[0].limit, 1e-3 * (1 + kTenPercent));
  EXPECT_EQ(e.calls[1].entrant, 1u);
  EXPECT_DOUBLE_EQ(e.calls[1].limit, 2e-4 / (1 + kTenPercent));
  EXPECT_TRUE(std::isinf(r.seconds[0][1]));
  EXPECT_EQ(r.winner, 0u);

  // Round 2 (push-relabel first): push-relabel completes, so Dinic's limit is 1.1 times its time.
  e = {};
  e.times = {{1.0, 2.0}, {1.0, 5e-4}, {1.0, 2.0}};
  r = play_tournament(2, e.runner(), kTenPercent, 10.0);
  const auto dinic_in_round_2 =
      std::find_if(e.calls.begin(), e.calls.end(),
                   [](const SyntheticEntrants::Call& c) { return c.round == 1 && c.entrant == 0; });
  ASSERT_NE(dinic_in_round_2, e.calls.end());
  EXPECT_DOUBLE_EQ(dinic_in_round_2->limit, 5e-4 * (1 + kTenPercent));
  EXPECT_EQ(r.round_winners, (std::vector<size_t>{0, 1, 0}));

  // A challenger exactly at the bound still wins; just past it, it loses.
  e = constant_times({1 + kTenPercent, 1.0});
  EXPECT_EQ(play_tournament(2, e.runner(), kTenPercent, 10.0).winner, 1u);
  e = constant_times({1 + kTenPercent, 1.0 + 1e-9});
  EXPECT_EQ(play_tournament(2, e.runner(), kTenPercent, 10.0).winner, 0u);
}

class TournamentAtHeadroom : public ::testing::TestWithParam<double> {};

TEST_P(TournamentAtHeadroom, DecidesExactlyAsWithFullTimes) {
  // Random times over six orders of magnitude, with per-round noise up to +-30%, two to four
  // entrants, some pathologically slow: the capped, shortened tournament must choose what the
  // rule chooses on every entrant's full time in every round.
  const double headroom = GetParam();
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> log_scale(-6.0, 0.0), noise(0.7, 1.3), unit(0, 1);
  int challenger_wins = 0;
  double worst_ratio = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const size_t k = 2 + trial % 3;
    std::vector<double> base(k);
    for (double& b : base) b = std::pow(10.0, log_scale(rng));
    if (unit(rng) < 0.3) base[0] = base[1] * (0.8 + 0.4 * unit(rng));  // a close race
    SyntheticEntrants e;
    for (int round = 0; round < kTournamentRounds; ++round) {
      std::vector<double> t(k);
      for (size_t i = 0; i < k; ++i) t[i] = base[i] * noise(rng);
      e.times.push_back(t);
    }
    const TournamentRecord r = play_tournament(k, e.runner(), headroom, 1e-6);
    ASSERT_EQ(r.winner, tournament_winner_from_full_times(e.times, headroom)) << "trial " << trial;
    challenger_wins += r.winner != 0;
    // Completed times are the true ones; a stopped entrant could not have won its round.
    for (size_t round = 0; round < r.seconds.size(); ++round) {
      std::vector<double> full = e.times[round];
      EXPECT_EQ(r.round_winners[round], tournament_winner_from_full_times({full, full}, headroom));
      for (size_t i = 0; i < k; ++i)
        if (!std::isinf(r.seconds[round][i])) {
          EXPECT_EQ(r.seconds[round][i], full[i]);
        }
    }
    if (k == 2 && r.seconds.size() == 2) {
      EXPECT_EQ(r.round_winners[0], r.round_winners[1]);
      const double winner_time = *std::min_element(base.begin(), base.end());
      worst_ratio = std::max(worst_ratio, e.spent / winner_time);
    }
  }
  EXPECT_GT(challenger_wins, 100);
  EXPECT_LT(worst_ratio, 16.0);  // deepening from 1 us; the benchmark measures the usual cost
}

INSTANTIATE_TEST_SUITE_P(Headrooms, TournamentAtHeadroom, ::testing::Values(0.0, 0.05, 0.10, 0.25));

TEST(Tournament, AnEngineThatCannotTakeTheNetworkDropsOut) {
  SyntheticEntrants e = constant_times({1.0, 0.1});
  const TournamentRunner inner = e.runner();
  int calls = 0;
  const TournamentRecord r = play_tournament(
      2,
      [&](size_t i, int round, double limit) {
        ++calls;
        if (i == 1) return TournamentTrial{TournamentTrial::Status::Unable, 0};
        return inner(i, round, limit);
      },
      kTenPercent);
  EXPECT_EQ(r.winner, 0u);
  EXPECT_TRUE(r.unable[1]);
  EXPECT_EQ(r.round_winners.size(), 1u);  // alone, Dinic wins once it has completed a solve
}

TEST(Tournament, TheHeadroomSetsTheProvisionalAndStoppingLimits) {
  // The reference's first provisional limit is (1 + h) L, the challenger's L; with the
  // reference completed, the challenger is stopped at R / (1 + h).
  for (double h : {kFivePercent, kTenPercent}) {
    SyntheticEntrants e = constant_times({2e-4, 1e-3});
    const TournamentRecord r = play_tournament(2, e.runner(), h, 1e-3);
    ASSERT_GE(e.calls.size(), 2u);
    EXPECT_DOUBLE_EQ(e.calls[0].limit, 1e-3 * (1 + h));
    EXPECT_DOUBLE_EQ(e.calls[1].limit, 2e-4 / (1 + h));
    EXPECT_EQ(r.winner, 0u);
  }
  // A challenger 7% faster in every round wins the whole tournament at 5%, not at 10%.
  SyntheticEntrants e = constant_times({1.0, 0.93});
  EXPECT_EQ(play_tournament(2, e.runner(), kFivePercent).winner, 1u);
  e = constant_times({1.0, 0.93});
  EXPECT_EQ(play_tournament(2, e.runner(), kTenPercent).winner, 0u);
}

}  // namespace
}  // namespace metile::tune
