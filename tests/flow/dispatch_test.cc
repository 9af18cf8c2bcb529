// Automatic dispatch: the size rule, the tournament on real engines, the headroom it uses and
// the cache (the tournament's own rules: tests/tune/tournament_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "metile/flow/dispatch.h"
#include "metile/flow/solver.h"
#include "metile/support/errors.h"
#include "metile/tune/tournament.h"
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
  EXPECT_DOUBLE_EQ(kRequiredHeadroom, 0.10);
  EXPECT_EQ(tune::round_winner({1.0, 0.95}, kRequiredHeadroom), 0u);
  EXPECT_EQ(tune::round_winner({1.0, 0.92}, kRequiredHeadroom), 0u);
  EXPECT_EQ(tune::round_winner({1.0, 0.90}, kRequiredHeadroom), 1u);
  EXPECT_EQ(tune::round_winner({1.0, 2.0}, kRequiredHeadroom), 0u);
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
