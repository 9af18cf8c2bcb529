// Automatic dispatch: the size rule, the tournament, the headroom rule and the cache.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "metile/flow/dispatch.h"
#include "metile/flow/solver.h"
#include "metile/support/errors.h"
#include "tests/flow/flow_test_support.h"

namespace metile::flow {
namespace {

FlowNetwork random_of_size(int vertices, uint64_t seed) {
  std::mt19937_64 rng(seed);
  testing::RandomNetworkSpec spec;
  spec.vertices = vertices;
  spec.arcs = vertices * 4;
  return testing::random_network(spec, rng);
}

TEST(Dispatch, SmallNetworksGoStraightToDinic) {
  DispatchCache cache;
  for (int n : {2, 8, 31}) {
    const FlowNetwork net = random_of_size(n, n);
    DispatchTrace trace;
    const MaxFlowResult r = dispatch_max_flow(net, 0, n - 1, cache, &trace);
    EXPECT_EQ(trace.path, DispatchTrace::Path::SmallNetwork);
    EXPECT_EQ(r.solver, "dinic");
    EXPECT_EQ(r.value, max_flow(net, 0, n - 1, SolverKind::Dinic).value);
  }
  EXPECT_EQ(cache.stats().small_network, 3u);
  EXPECT_EQ(cache.stats().tournaments, 0u);
  EXPECT_EQ(cache.size(), 0u);  // no decision is stored for small networks
}

TEST(Dispatch, ThirtyTwoVerticesEnterTheTournamentThenHitTheCache) {
  DispatchCache cache;
  const FlowNetwork net = random_of_size(kDinicOnlyBelowVertices, 1);
  DispatchTrace first;
  const MaxFlowResult a = dispatch_max_flow(net, 0, 1, cache, &first);
  EXPECT_EQ(first.path, DispatchTrace::Path::Tournament);
  ASSERT_EQ(first.median_seconds.size(), 2u);
  EXPECT_EQ(first.median_seconds[0].first, "dinic");
  EXPECT_EQ(first.median_seconds[1].first, "push-relabel");
  ASSERT_GE(first.round_winners.size(), 2u);
  ASSERT_LE(first.round_winners.size(), 3u);
  EXPECT_EQ(std::count(first.round_winners.begin(), first.round_winners.end(), first.solver), 2);
  EXPECT_EQ(a.solver, first.solver);
  EXPECT_EQ(a.value, max_flow(net, 0, 1, SolverKind::Dinic).value);
  EXPECT_EQ(a.source_side, max_flow(net, 0, 1, SolverKind::Dinic).source_side);

  DispatchTrace second;
  const MaxFlowResult b = dispatch_max_flow(net, 0, 1, cache, &second);
  EXPECT_EQ(second.path, DispatchTrace::Path::CacheHit);
  EXPECT_EQ(second.solver, first.solver);
  EXPECT_EQ(b.value, a.value);
  EXPECT_EQ(b.source_side, a.source_side);
  EXPECT_EQ(cache.stats().tournaments, 1u);
  EXPECT_EQ(cache.stats().cache_hits, 1u);

  // An equal network built separately hits the same entry; other terminals do not.
  const FlowNetwork copy = random_of_size(kDinicOnlyBelowVertices, 1);
  DispatchTrace third;
  dispatch_max_flow(copy, 0, 1, cache, &third);
  EXPECT_EQ(third.path, DispatchTrace::Path::CacheHit);
  dispatch_max_flow(copy, 1, 0, cache, &third);
  EXPECT_EQ(third.path, DispatchTrace::Path::Tournament);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(Dispatch, ChangedCapacityMissesTheCache) {
  DispatchCache cache;
  FlowNetwork::Builder a(40), b(40);
  for (int v = 0; v + 1 < 40; ++v) {
    a.add_arc(v, v + 1, 10);
    b.add_arc(v, v + 1, v == 20 ? 11 : 10);
  }
  DispatchTrace trace;
  dispatch_max_flow(std::move(a).build(), 0, 39, cache, &trace);
  dispatch_max_flow(std::move(b).build(), 0, 39, cache, &trace);
  EXPECT_EQ(trace.path, DispatchTrace::Path::Tournament);
  EXPECT_EQ(cache.stats().tournaments, 2u);
}

TEST(Dispatch, PushRelabelNeedsTenPercentHeadroom) {
  EXPECT_EQ(choose_tournament_winner({{"dinic", 1.0}, {"push-relabel", 0.95}}), "dinic");
  EXPECT_EQ(choose_tournament_winner({{"dinic", 1.0}, {"push-relabel", 0.92}}), "dinic");
  EXPECT_EQ(choose_tournament_winner({{"dinic", 1.0}, {"push-relabel", 0.90}}), "push-relabel");
  EXPECT_EQ(choose_tournament_winner({{"dinic", 1.0}, {"push-relabel", 0.5}}), "push-relabel");
  EXPECT_EQ(choose_tournament_winner({{"dinic", 1.0}, {"push-relabel", 2.0}}), "dinic");
  EXPECT_EQ(choose_tournament_winner({{"dinic", 1.0}, {"a", 0.8}, {"b", 0.6}}), "b");
}

// Synthetic engines for the tournament logic: entrant i takes times[round][i] seconds in that
// round; a trial under a shorter limit is stopped there. Records every limit and the time spent.
struct SyntheticEngines {
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

SyntheticEngines constant_times(std::vector<double> per_entrant) {
  SyntheticEngines e;
  e.times.assign(kTournamentRounds, per_entrant);
  return e;
}

TEST(DispatchTournament, ADecidedTournamentSkipsItsLastRound) {
  for (const auto& [dinic, challenger, winner] :
       {std::tuple{10.0, 2.6, size_t{1}}, std::tuple{1.0, 5.0, size_t{0}},
        std::tuple{1.0, 0.95, size_t{0}}, std::tuple{1.0, 0.9, size_t{1}}}) {
    SyntheticEngines e = constant_times({dinic, challenger});
    const TournamentRecord r = play_tournament(2, e.runner());
    EXPECT_EQ(r.winner, winner) << dinic << " vs " << challenger;
    ASSERT_EQ(r.round_winners.size(), 2u);
    EXPECT_EQ(r.round_winners[0], winner);
    EXPECT_EQ(r.round_winners[1], winner);
    for (const auto& call : e.calls) EXPECT_LT(call.round, 2);
  }
}

TEST(DispatchTournament, ASplitTournamentPlaysTheThirdRound) {
  SyntheticEngines e;
  e.times = {{1.0, 0.5}, {1.0, 2.0}, {1.0, 0.8}};  // push-relabel, Dinic, push-relabel
  TournamentRecord r = play_tournament(2, e.runner());
  EXPECT_EQ(r.round_winners, (std::vector<size_t>{1, 0, 1}));
  EXPECT_EQ(r.winner, 1u);
  e = {};
  e.times = {{1.0, 0.5}, {1.0, 2.0}, {1.0, 0.95}};  // the last round lacks the headroom
  r = play_tournament(2, e.runner());
  EXPECT_EQ(r.round_winners, (std::vector<size_t>{1, 0, 0}));
  EXPECT_EQ(r.winner, 0u);
}

TEST(DispatchTournament, LosersAreStoppedAtTheExactHeadroomBounds) {
  // Round 1 (Dinic first): Dinic completes within the first provisional limit, so
  // push-relabel's limit is Dinic's time / 1.1, and it is stopped there.
  SyntheticEngines e = constant_times({2e-4, 1e-3});
  TournamentRecord r = play_tournament(2, e.runner(), 1e-3);
  ASSERT_GE(e.calls.size(), 2u);
  EXPECT_EQ(e.calls[0].entrant, 0u);
  EXPECT_DOUBLE_EQ(e.calls[0].limit, 1e-3 * (1 + kRequiredHeadroom));
  EXPECT_EQ(e.calls[1].entrant, 1u);
  EXPECT_DOUBLE_EQ(e.calls[1].limit, 2e-4 / (1 + kRequiredHeadroom));
  EXPECT_TRUE(std::isinf(r.seconds[0][1]));
  EXPECT_EQ(r.winner, 0u);

  // Round 2 (push-relabel first): push-relabel completes, so Dinic's limit is 1.1 times its time.
  e = {};
  e.times = {{1.0, 2.0}, {1.0, 5e-4}, {1.0, 2.0}};
  r = play_tournament(2, e.runner(), 10.0);
  const auto dinic_in_round_2 =
      std::find_if(e.calls.begin(), e.calls.end(),
                   [](const SyntheticEngines::Call& c) { return c.round == 1 && c.entrant == 0; });
  ASSERT_NE(dinic_in_round_2, e.calls.end());
  EXPECT_DOUBLE_EQ(dinic_in_round_2->limit, 5e-4 * (1 + kRequiredHeadroom));
  EXPECT_EQ(r.round_winners, (std::vector<size_t>{0, 1, 0}));

  // A challenger exactly at the bound still wins; just past it, it loses.
  e = constant_times({1 + kRequiredHeadroom, 1.0});
  EXPECT_EQ(play_tournament(2, e.runner(), 10.0).winner, 1u);
  e = constant_times({1 + kRequiredHeadroom, 1.0 + 1e-9});
  EXPECT_EQ(play_tournament(2, e.runner(), 10.0).winner, 0u);
}

TEST(DispatchTournament, DecidesExactlyAsWithFullTimes) {
  // Random times over six orders of magnitude, with per-round noise up to +-30%, two to four
  // entrants, some engines pathologically slow: the capped, shortened tournament must choose
  // what the rule chooses on every entrant's full time in every round.
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> log_scale(-6.0, 0.0), noise(0.7, 1.3), unit(0, 1);
  int challenger_wins = 0;
  double worst_ratio = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    const size_t k = 2 + trial % 3;
    std::vector<double> base(k);
    for (double& b : base) b = std::pow(10.0, log_scale(rng));
    if (unit(rng) < 0.3) base[0] = base[1] * (0.8 + 0.4 * unit(rng));  // a close race
    SyntheticEngines e;
    for (int round = 0; round < kTournamentRounds; ++round) {
      std::vector<double> t(k);
      for (size_t i = 0; i < k; ++i) t[i] = base[i] * noise(rng);
      e.times.push_back(t);
    }
    const TournamentRecord r = play_tournament(k, e.runner(), 1e-6);
    ASSERT_EQ(r.winner, tournament_winner_from_full_times(e.times)) << "trial " << trial;
    challenger_wins += r.winner != 0;
    // Completed times are the true ones; a stopped entrant could not have won its round.
    for (size_t round = 0; round < r.seconds.size(); ++round) {
      std::vector<double> full = e.times[round];
      EXPECT_EQ(r.round_winners[round], tournament_winner_from_full_times({full, full}));
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

TEST(DispatchTournament, AnEngineThatCannotTakeTheNetworkDropsOut) {
  SyntheticEngines e = constant_times({1.0, 0.1});
  const TournamentRunner inner = e.runner();
  int calls = 0;
  const TournamentRecord r = play_tournament(2, [&](size_t i, int round, double limit) {
    ++calls;
    if (i == 1) return TournamentTrial{TournamentTrial::Status::Unable, 0};
    return inner(i, round, limit);
  });
  EXPECT_EQ(r.winner, 0u);
  EXPECT_TRUE(r.unable[1]);
  EXPECT_EQ(r.round_winners.size(), 1u);  // alone, Dinic wins once it has completed a solve
}

TEST(Dispatch, CacheIsThreadSafe) {
  DispatchCache cache;
  std::vector<FlowNetwork> nets;
  for (int i = 0; i < 4; ++i) nets.push_back(random_of_size(40 + i, 100 + i));
  std::vector<std::thread> threads;
  std::vector<Capacity> values(8 * 4);
  for (int thread = 0; thread < 8; ++thread)
    threads.emplace_back([&, thread] {
      for (int rep = 0; rep < 3; ++rep)
        for (int i = 0; i < 4; ++i)
          values[thread * 4 + i] = dispatch_max_flow(nets[i], 0, 1, cache).value;
    });
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i)
    for (int thread = 0; thread < 8; ++thread)
      EXPECT_EQ(values[thread * 4 + i], max_flow(nets[i], 0, 1, SolverKind::Dinic).value);
  EXPECT_EQ(cache.size(), 4u);
  const DispatchStats stats = cache.stats();
  EXPECT_EQ(stats.tournaments + stats.cache_hits, 8u * 3u * 4u);
  EXPECT_GE(stats.tournaments, 4u);
}

TEST(Dispatch, AutoUsesTheGlobalCache) {
  global_dispatch_cache().clear();
  const FlowNetwork net = random_of_size(64, 5);
  max_flow(net, 0, 1);
  max_flow(net, 0, 1);
  EXPECT_EQ(global_dispatch_cache().stats().tournaments, 1u);
  EXPECT_EQ(global_dispatch_cache().stats().cache_hits, 1u);
}

// An engine that is exact but slow, and one that is wrong: the registry's gate.
class SlowDinic final : public MaxFlowSolver {
 public:
  std::string name() const override { return "slow-dinic"; }
  MaxFlowResult solve(const FlowNetwork& net, int s, int t) const override {
    MaxFlowResult r = make_dinic_solver()->solve(net, s, t);
    r.solver = name();
    return r;
  }
};

class OffByOne final : public MaxFlowSolver {
 public:
  std::string name() const override { return "off-by-one"; }
  MaxFlowResult solve(const FlowNetwork& net, int s, int t) const override {
    MaxFlowResult r = make_dinic_solver()->solve(net, s, t);
    r.value += 1;
    r.solver = name();
    return r;
  }
};

TEST(SolverRegistry, CandidatesJoinDispatchOnlyAfterPassingTheDifferentialTest) {
  SolverRegistry registry;
  EXPECT_EQ(registry.dispatch_entrants().size(), 2u);
  registry.add_candidate(std::make_unique<SlowDinic>());
  registry.add_candidate(std::make_unique<OffByOne>());
  EXPECT_THROW(registry.add_candidate(std::make_unique<OffByOne>()), UserError);
  EXPECT_EQ(registry.dispatch_entrants().size(), 2u);  // not yet qualified

  const std::vector<FlowProblem> corpus = differential_corpus(60, 11);
  const DifferentialReport bad = registry.qualify("off-by-one", corpus);
  EXPECT_FALSE(bad.passed());
  EXPECT_EQ(bad.mismatches, bad.problems);
  EXPECT_NE(bad.first_mismatch.find("value"), std::string::npos);
  EXPECT_EQ(registry.dispatch_entrants().size(), 2u);

  const DifferentialReport good = registry.qualify("slow-dinic", corpus);
  EXPECT_TRUE(good.passed()) << good.first_mismatch;
  ASSERT_EQ(registry.dispatch_entrants().size(), 3u);
  EXPECT_EQ(registry.dispatch_entrants().front()->name(), "dinic");

  DispatchCache cache;
  DispatchTrace trace;
  dispatch_max_flow(random_of_size(50, 8), 0, 1, cache, &trace, registry);
  EXPECT_EQ(trace.median_seconds.size(), 3u);
  EXPECT_THROW(registry.get("nonexistent"), UserError);
}

// Exact, but spends 50 ms per solve unless its deadline stops it first.
class Dawdler final : public MaxFlowSolver {
 public:
  std::string name() const override { return "dawdler"; }
  MaxFlowResult solve(const FlowNetwork& net, int s, int t) const override {
    return solve_before(net, s, t, Deadline());
  }
  MaxFlowResult solve_before(const FlowNetwork& net, int s, int t, Deadline d) const override {
    const auto until = Deadline::Clock::now() + std::chrono::milliseconds(50);
    while (Deadline::Clock::now() < until) d.tick();
    MaxFlowResult r = make_dinic_solver()->solve(net, s, t);
    r.solver = name();
    return r;
  }
};

TEST(Dispatch, TournamentStopsEntrantsThatHaveAlreadyLost) {
  SolverRegistry registry;
  registry.add_candidate(std::make_unique<Dawdler>());
  ASSERT_TRUE(registry.qualify("dawdler", differential_corpus(3, 1)).passed());
  DispatchCache cache;
  DispatchTrace trace;
  const auto start = Deadline::Clock::now();
  const MaxFlowResult r = dispatch_max_flow(random_of_size(40, 9), 0, 1, cache, &trace, registry);
  const double took = std::chrono::duration<double>(Deadline::Clock::now() - start).count();
  EXPECT_NE(r.solver, "dawdler");
  ASSERT_EQ(trace.median_seconds.size(), 3u);
  EXPECT_EQ(trace.median_seconds[2].first, "dawdler");
  EXPECT_TRUE(std::isinf(trace.median_seconds[2].second));
  EXPECT_LT(took, 0.1);  // three full dawdles would take 150 ms
}

TEST(Deadline, EnginesStopOnceTheDeadlinePasses) {
  const FlowNetwork net = random_of_size(3000, 4);
  const Deadline passed(Deadline::Clock::now() - std::chrono::seconds(1));
  EXPECT_THROW(make_dinic_solver()->solve_before(net, 0, 1, passed), SolveCancelled);
  EXPECT_THROW(make_push_relabel_solver()->solve_before(net, 0, 1, passed), SolveCancelled);
  const Deadline far(Deadline::Clock::now() + std::chrono::hours(1));
  EXPECT_EQ(make_dinic_solver()->solve_before(net, 0, 1, far).value,
            make_push_relabel_solver()->solve_before(net, 0, 1, far).value);
}

TEST(SolverRegistry, PushRelabelPassesTheDifferentialTest) {
  const std::vector<FlowProblem> corpus = differential_corpus(300, 2024);
  const DifferentialReport report =
      differential_test(*make_push_relabel_solver(), *make_dinic_solver(), corpus);
  EXPECT_TRUE(report.passed()) << report.first_mismatch;
  EXPECT_EQ(report.problems, 300);
}

}  // namespace
}  // namespace metile::flow
