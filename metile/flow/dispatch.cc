#include "metile/flow/dispatch.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "metile/flow/solve_prelude.h"
#include "metile/support/errors.h"

namespace metile::flow {

DispatchCache::Key DispatchCache::key_of(const FlowNetwork& net, int source, int sink) {
  return {net.topology_hash(), net.vertex_count(), net.arc_count(), source, sink};
}

std::optional<std::string> DispatchCache::find(const Key& key) {
  std::lock_guard lock(mutex_);
  auto it = decisions_.find(key);
  if (it == decisions_.end()) return std::nullopt;
  ++stats_.cache_hits;
  return it->second;
}

void DispatchCache::insert(const Key& key, const std::string& solver) {
  std::lock_guard lock(mutex_);
  decisions_.emplace(key, solver);
}

void DispatchCache::count_small_network() {
  std::lock_guard lock(mutex_);
  ++stats_.small_network;
}

void DispatchCache::count_tournament() {
  std::lock_guard lock(mutex_);
  ++stats_.tournaments;
}

void DispatchCache::clear() {
  std::lock_guard lock(mutex_);
  decisions_.clear();
  stats_ = {};
}

size_t DispatchCache::size() const {
  std::lock_guard lock(mutex_);
  return decisions_.size();
}

DispatchStats DispatchCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

DispatchCache& global_dispatch_cache() {
  static DispatchCache cache;
  return cache;
}

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();
constexpr double kHeadroomFactor = 1.0 + kRequiredHeadroom;

// The per-round rule on entrant indices (0 is the reference).
size_t round_winner(const std::vector<double>& seconds) {
  size_t winner = 0;
  double best = seconds.front();
  for (size_t i = 1; i < seconds.size(); ++i)
    if (seconds[i] * kHeadroomFactor <= seconds.front() && seconds[i] < best) {
      winner = i;
      best = seconds[i];
    }
  return winner;
}

}  // namespace

std::string choose_tournament_winner(const std::vector<std::pair<std::string, double>>& times) {
  METILE_ASSERT(!times.empty(), "tournament without entrants");
  std::vector<double> seconds;
  for (const auto& entry : times) seconds.push_back(entry.second);
  return times[round_winner(seconds)].first;
}

size_t tournament_winner_from_full_times(const std::vector<std::vector<double>>& seconds) {
  METILE_ASSERT(!seconds.empty() && !seconds.front().empty(), "tournament without entrants");
  std::vector<int> wins(seconds.front().size(), 0);
  for (const std::vector<double>& round : seconds)
    if (++wins[round_winner(round)] >= kRoundsToWin) return round_winner(round);
  return 0;
}

// The tournament. Each round is a contest of its own, judged by the headroom rule on that
// round's times; the engine that wins kRoundsToWin (two) rounds is chosen. Rounds alternate the
// entrants' order (forward, backward, forward) so neither engine always runs on a cache warmed
// by the other.
//
// What it costs is kept near the minimum by three rules, none of which can change a decision
// (tests/flow/dispatch_test.cc checks that against the full-information rule above):
//
//  1. Stop an entrant as soon as it can no longer win the round. With h = kRequiredHeadroom,
//     reference time R and challenger times c_j of the round:
//       - a challenger wins only if c * (1 + h) <= R and c < every other challenger's time, so
//         once it has run past  min(R / (1 + h), min_j c_j)  over the completed entrants of the
//         round it has lost (c > R / (1 + h) means c * (1 + h) > R);
//       - the reference wins only if every challenger has c * (1 + h) > R, so once it has run
//         past  (1 + h) * min_j c_j  it has lost (R > (1 + h) * c means c qualifies).
//     For Dinic against push-relabel: push-relabel is stopped past t_dinic / 1.1 (about
//     0.909 t_dinic) and Dinic past 1.1 t_push_relabel. A stopped loser counts as infinite time,
//     which gives the same round winner as its full time would. A bound that was already
//     passed by an earlier, provisionally limited run of the same round (below) settles the
//     entrant without running it again.
//  2. Until some entrant of the round has completed there is no such bound, so the entrants
//     take turns under provisional limits: L for challengers and (1 + h) L for the reference
//     (so that a challenger completing within L has beaten a stopped reference outright, and a
//     reference completing within (1 + h) L a stopped challenger). A run stopped at a
//     provisional limit only raises that entrant's known lower bound; L then grows threefold.
//     Round one starts at L = first_budget_seconds (1 ms); later rounds start at 1.25 times the
//     fastest completed solve so far, which usually settles the round in one turn.
//  3. Once an engine has won two rounds the remaining round cannot change the outcome and is
//     skipped; an engine left alone (the others unable to take the network) wins once it has
//     completed a solve.
TournamentRecord play_tournament(size_t k, const TournamentRunner& run, double first_budget) {
  METILE_ASSERT(k > 0, "tournament without entrants");
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
      if (i == 0) return kHeadroomFactor * min_challenger;
      return std::min(done[0] / kHeadroomFactor, min_challenger);
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
        const double provisional = any_done ? kNever : budget * (i == 0 ? kHeadroomFactor : 1.0);
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
            METILE_ASSERT(i != 0, "the reference engine must take every network");
            record.unable[i] = 1;
            break;
        }
      }
      bool all = true;
      for (size_t i = 0; i < k; ++i) all = all && settled(i);
      if (all) break;
      budget *= kGrowth;
    }
    const size_t w = round_winner(done);
    record.seconds.push_back(done);
    record.round_winners.push_back(w);
    ++wins[w];
  }
  record.winner = 0;
  for (size_t i = 0; i < k; ++i)
    if (wins[i] >= kRoundsToWin) record.winner = i;
  return record;
}

namespace {

using Clock = std::chrono::steady_clock;

void check_agreement(const std::vector<const MaxFlowSolver*>& entrants,
                     const std::vector<std::optional<MaxFlowResult>>& results) {
  const MaxFlowResult* first = nullptr;
  size_t first_index = 0;
  for (size_t i = 0; i < entrants.size(); ++i) {
    if (!results[i]) continue;
    if (!first) {
      first = &*results[i];
      first_index = i;
    } else if (results[i]->value != first->value || results[i]->source_side != first->source_side) {
      throw InternalError("max-flow tournament: " + entrants[i]->name() + " disagrees with " +
                          entrants[first_index]->name() + " (value " +
                          std::to_string(results[i]->value) + " vs " +
                          std::to_string(first->value) + ")");
    }
  }
}

// Runs the tournament on real engines and returns the winner's answer from one of its
// tournament solves (every engine returns the same value and canonical cut), so the winner is
// never solved again.
MaxFlowResult run_tournament(const FlowNetwork& net, int s, int t,
                             const std::vector<const MaxFlowSolver*>& entrants,
                             DispatchTrace& trace) {
  const size_t k = entrants.size();
  std::vector<std::optional<MaxFlowResult>> results(k);
  auto run = [&](size_t i, int /*round*/, double limit_seconds) {
    TournamentTrial trial;
    const auto start = Clock::now();
    const Deadline deadline =
        limit_seconds == kNever
            ? Deadline()
            : Deadline(start + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(limit_seconds)));
    try {
      MaxFlowResult r = entrants[i]->solve_before(net, s, t, deadline);
      trial.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      if (!results[i]) results[i] = std::move(r);
    } catch (const SolveCancelled&) {
      trial.status = TournamentTrial::Status::Stopped;
    } catch (const UserError&) {
      // An engine that cannot take this network (e.g. push-relabel's 64-bit excess bound)
      // drops out; the reference never does, so its errors propagate.
      if (i == 0) throw;
      trial.status = TournamentTrial::Status::Unable;
    }
    return trial;
  };
  const TournamentRecord record = play_tournament(k, run);
  check_agreement(entrants, results);
  trace.median_seconds.clear();
  trace.round_winners.clear();
  trace.solves = record.trials;
  for (size_t w : record.round_winners) trace.round_winners.push_back(entrants[w]->name());
  for (size_t i = 0; i < k; ++i) {
    if (record.unable[i]) continue;
    std::vector<double> times;
    for (const std::vector<double>& round : record.seconds) times.push_back(round[i]);
    std::sort(times.begin(), times.end());
    trace.median_seconds.emplace_back(entrants[i]->name(), times[times.size() / 2]);
  }
  trace.solver = entrants[record.winner]->name();
  // Only with three or more entrants can the reference win by default without a completed
  // solve (no engine won two rounds); it is then solved once more.
  if (!results[record.winner]) return entrants[record.winner]->solve(net, s, t);
  return std::move(*results[record.winner]);
}

}  // namespace

MaxFlowResult dispatch_max_flow(const FlowNetwork& net, int source, int sink, DispatchCache& cache,
                                DispatchTrace* trace, const SolverRegistry& registry) {
  validate_terminals(net, source, sink);
  DispatchTrace local;
  DispatchTrace& tr = trace ? *trace : local;
  tr.median_seconds.clear();
  tr.round_winners.clear();
  tr.solves = 0;
  if (net.vertex_count() < kDinicOnlyBelowVertices) {
    cache.count_small_network();
    tr.path = DispatchTrace::Path::SmallNetwork;
    tr.solver = registry.reference().name();
    return registry.reference().solve(net, source, sink);
  }
  const DispatchCache::Key key = DispatchCache::key_of(net, source, sink);
  if (std::optional<std::string> cached = cache.find(key)) {
    tr.path = DispatchTrace::Path::CacheHit;
    tr.solver = *cached;
    return registry.get(*cached).solve(net, source, sink);
  }
  cache.count_tournament();
  tr.path = DispatchTrace::Path::Tournament;
  const std::vector<const MaxFlowSolver*> entrants = registry.dispatch_entrants();
  MaxFlowResult result = run_tournament(net, source, sink, entrants, tr);
  cache.insert(key, tr.solver);
  return result;
}

}  // namespace metile::flow
