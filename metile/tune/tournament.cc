#include "metile/tune/tournament.h"

#include <algorithm>
#include <limits>

#include "metile/support/errors.h"

namespace metile::tune {

namespace {
constexpr double kNever = std::numeric_limits<double>::infinity();
}  // namespace

size_t round_winner(const std::vector<double>& seconds, double headroom) {
  METILE_ASSERT(!seconds.empty(), "tournament without entrants");
  size_t winner = 0;
  double best = seconds.front();
  for (size_t i = 1; i < seconds.size(); ++i)
    if (seconds[i] * (1.0 + headroom) <= seconds.front() && seconds[i] < best) {
      winner = i;
      best = seconds[i];
    }
  return winner;
}

size_t tournament_winner_from_full_times(const std::vector<std::vector<double>>& seconds,
                                         double headroom) {
  METILE_ASSERT(!seconds.empty() && !seconds.front().empty(), "tournament without entrants");
  std::vector<int> wins(seconds.front().size(), 0);
  for (const std::vector<double>& round : seconds) {
    const size_t w = round_winner(round, headroom);
    if (++wins[w] >= kRoundsToWin) return w;
  }
  return 0;
}

// The tournament. Each round is a contest of its own, judged by the headroom rule on that
// round's times; the entrant that wins kRoundsToWin (two) rounds is chosen. Rounds alternate
// the entrants' order (forward, backward, forward) so no entrant always runs on a cache warmed
// by another.
//
// What it costs is kept near the minimum by three rules, none of which can change a decision
// (tests/tune/tournament_test.cc checks that against the full-information rule above):
//
//  1. Stop an entrant as soon as it can no longer win the round. With h = headroom,
//     reference time R and challenger times c_j of the round:
//       - a challenger wins only if c * (1 + h) <= R and c < every other challenger's time, so
//         once it has run past  min(R / (1 + h), min_j c_j)  over the completed entrants of the
//         round it has lost (c > R / (1 + h) means c * (1 + h) > R);
//       - the reference wins only if every challenger has c * (1 + h) > R, so once it has run
//         past  (1 + h) * min_j c_j  it has lost (R > (1 + h) * c means c qualifies).
//     With h = 10% and two entrants: the challenger is stopped past R / 1.1 (about 0.909 R) and
//     the reference past 1.1 c. A stopped loser counts as infinite time, which gives the same
//     round winner as its full time would. A bound that was already
//     passed by an earlier, provisionally limited run of the same round (below) settles the
//     entrant without running it again.
//  2. Until some entrant of the round has completed there is no such bound, so the entrants
//     take turns under provisional limits: L for challengers and (1 + h) L for the reference
//     (so that a challenger completing within L has beaten a stopped reference outright, and a
//     reference completing within (1 + h) L a stopped challenger). A run stopped at a
//     provisional limit only raises that entrant's known lower bound; L then grows threefold.
//     Round one starts at L = first_budget_seconds (1 ms); later rounds start at 1.25 times the
//     fastest completed run so far, which usually settles the round in one turn.
//  3. Once an entrant has won two rounds the remaining round cannot change the outcome and is
//     skipped; an entrant left alone (the others unable to take the input) wins once it has
//     completed a run.
TournamentRecord play_tournament(size_t k, const TournamentRunner& run, double headroom,
                                 double first_budget) {
  METILE_ASSERT(k > 0, "tournament without entrants");
  METILE_ASSERT(headroom >= 0, "negative tournament headroom");
  const double factor = 1.0 + headroom;
  constexpr double kGrowth = 3.0;
  constexpr double kLaterRoundSlack = 1.25;
  TournamentRecord record;
  record.unable.assign(k, 0);
  std::vector<int> wins(k, 0);
  std::vector<char> ever_completed(k, 0);
  double fastest = kNever;
  auto active = [&] {
    size_t n = 0;
    for (size_t i = 0; i < k; ++i) n += !record.unable[i];
    return n;
  };
  for (int round = 0; round < kTournamentRounds; ++round) {
    if (*std::max_element(wins.begin(), wins.end()) >= kRoundsToWin) break;
    if (active() == 1 && ever_completed[0]) break;
    std::vector<size_t> order(k);
    for (size_t j = 0; j < k; ++j) order[j] = round % 2 == 0 ? j : k - 1 - j;
    std::vector<double> done(k, kNever);  // completed time in this round
    std::vector<double> lower(k, 0.0);    // known lower bound from provisional stops
    std::vector<char> lost(k, 0);
    // The bound past which entrant i can no longer win this round (rule 1).
    auto bound = [&](size_t i) {
      double min_challenger = kNever;
      for (size_t j = 1; j < k; ++j)
        if (j != i) min_challenger = std::min(min_challenger, done[j]);
      if (i == 0) return factor * min_challenger;
      return std::min(done[0] / factor, min_challenger);
    };
    auto settled = [&](size_t i) { return done[i] < kNever || lost[i] || record.unable[i]; };
    double budget = round == 0 ? first_budget : kLaterRoundSlack * fastest;
    for (;;) {
      for (size_t i : order) {
        if (settled(i)) continue;
        const double cap = bound(i);
        if (lower[i] >= cap) {
          lost[i] = 1;
          continue;
        }
        bool any_done = false;
        for (size_t j = 0; j < k; ++j) any_done = any_done || done[j] < kNever;
        const double provisional = any_done ? kNever : budget * (i == 0 ? factor : 1.0);
        const double limit = std::min(cap, provisional);
        ++record.trials;
        const TournamentTrial trial = run(i, round, limit);
        switch (trial.status) {
          case TournamentTrial::Status::Completed:
            done[i] = trial.seconds;
            ever_completed[i] = 1;
            fastest = std::min(fastest, trial.seconds);
            break;
          case TournamentTrial::Status::Stopped:
            if (limit >= cap)
              lost[i] = 1;
            else
              lower[i] = std::max(lower[i], limit);
            break;
          case TournamentTrial::Status::Unable:
            METILE_ASSERT(i != 0, "the reference must take every input");
            record.unable[i] = 1;
            break;
        }
      }
      bool all = true;
      for (size_t i = 0; i < k; ++i) all = all && settled(i);
      if (all) break;
      budget *= kGrowth;
    }
    const size_t w = round_winner(done, headroom);
    record.seconds.push_back(done);
    record.round_winners.push_back(w);
    ++wins[w];
  }
  record.winner = 0;
  for (size_t i = 0; i < k; ++i)
    if (wins[i] >= kRoundsToWin) record.winner = i;
  return record;
}

}  // namespace metile::tune
