// The selector on fake clocks: headroom exactly at 5% and 10%, ties, an inconclusive
// tournament, gate and compile failures, and the interleaved order of the rounds.
#include "metile/tune/selector.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

#include "metile/support/errors.h"

namespace metile::tune {
namespace {

std::vector<Entrant> ready(size_t n) {
  std::vector<Entrant> entrants(n);
  entrants[0].name = "native";
  for (size_t i = 1; i < n; ++i) entrants[i].name = "k" + std::to_string(i);
  return entrants;
}

// A fake clock: entrant i always takes seconds[i]; records the order of the calls.
struct FixedClock {
  explicit FixedClock(std::vector<double> s) : seconds(std::move(s)) {}
  std::vector<double> seconds;
  std::vector<size_t> calls;
  Timer timer() {
    return [this](size_t i) {
      calls.push_back(i);
      return seconds.at(i);
    };
  }
};

SelectorOptions options(double headroom) {
  SelectorOptions o;
  o.headroom = headroom;
  o.warmup = 1;
  o.samples = 3;
  return o;
}

TEST(Selector, FivePercentHeadroomExactlyAtTheBoundarySwitches) {
  const double h = boundary_headroom(Boundary::Primitive);
  FixedClock at({1.05, 1.0}), below({1.0499, 1.0});
  const Decision d = select(ready(2), at.timer(), options(h));
  EXPECT_EQ(d.winner, 1u);
  EXPECT_EQ(d.why, Why::Faster);
  EXPECT_EQ(d.reason,
            "k1 chosen: it won 2 of 2 finalist rounds with the 5% headroom; k1 took 1000 ms "
            "against native 1050 ms (1.05x)");
  const Decision kept = select(ready(2), below.timer(), options(h));
  EXPECT_EQ(kept.winner, 0u);
  EXPECT_EQ(kept.why, Why::NoHeadroom);
}

TEST(Selector, GraphAndQuantizedMlpBoundariesNeedTenPercent) {
  EXPECT_EQ(boundary_headroom(parse_boundary("graph")), 0.10);
  EXPECT_EQ(boundary_headroom(parse_boundary("quantized_mlp")), 0.10);
  FixedClock at({1.1, 1.0}), below({1.09, 1.0});
  EXPECT_EQ(select(ready(2), at.timer(), options(0.10)).winner, 1u);
  EXPECT_EQ(select(ready(2), below.timer(), options(0.10)).winner, 0u);
  EXPECT_EQ(select(ready(2), below.timer(), options(0.05)).winner, 1u);
  EXPECT_THROW(parse_boundary("kernel"), UserError);
}

TEST(Selector, ATieKeepsTheNativeOperation) {
  FixedClock clock({1.0, 1.0, 1.0});
  const Decision d = select(ready(3), clock.timer(), options(0.05));
  EXPECT_EQ(d.winner, 0u);
  EXPECT_EQ(d.why, Why::NoHeadroom);
  EXPECT_EQ(d.reason,
            "native kept: no candidate has the 5% headroom in the provisional round: the "
            "fastest candidate k1 took 1000 ms against native 1000 ms (1x)");
}

TEST(Selector, RoundsAreInterleavedAndSkippedOnceDecided) {
  FixedClock clock({2.0, 1.0});
  const Decision d = select(ready(2), clock.timer(), options(0.05));
  // Warm-up, then the provisional passes forward, backward, forward; the first finalist round
  // as the provisional one, the second starting backward; the third is not needed.
  const std::vector<size_t> expected{0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0};
  EXPECT_EQ(clock.calls, expected);
  EXPECT_EQ(d.timings, 20);
  EXPECT_EQ(d.rounds.size(), 2u);
}

TEST(Selector, SplitRoundsAreInconclusiveAndKeepTheNativeOperation) {
  // One pass per round: calls 0-2 warm-up, 3-5 provisional, then one round per three calls,
  // won in turn by native, k1 and k2.
  const std::vector<std::vector<double>> phases = {
      {9, 9, 9}, {10, 5, 6}, {10, 20, 20}, {10, 5, 6}, {10, 6, 5}};
  int call = 0;
  SelectorOptions o = options(0.05);
  o.samples = 1;
  const Decision d = select(
      ready(3), [&](size_t i) { return phases.at(call++ / 3).at(i); }, o);
  EXPECT_EQ(d.winner, 0u);
  EXPECT_EQ(d.why, Why::Inconclusive);
  EXPECT_EQ(d.round_winners, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(d.reason,
            "native kept: the tournament was inconclusive: the 3 finalist rounds were won by "
            "native, k1, k2, no entrant won 2");
}

TEST(Selector, FailedCandidatesKeepTheNativeOperationAndSaySo) {
  std::vector<Entrant> entrants = ready(3);
  entrants[1].verdict = Verdict::GateFailed;
  entrants[1].gated = true;
  entrants[1].gate = gate_output(std::vector<double>{1.0}, std::vector<double>{1.5}, "f32");
  entrants[2].verdict = Verdict::CompileFailed;
  entrants[2].detail = "BLOCK = 3 is not a power of two";
  FixedClock clock({1.0, 0.1, 0.1});
  const Decision d = select(entrants, clock.timer(), options(0.05));
  EXPECT_EQ(d.winner, 0u);
  EXPECT_EQ(d.why, Why::NoReadyCandidate);
  EXPECT_TRUE(clock.calls.empty());
  EXPECT_EQ(d.reason,
            "native kept: candidate k1 failed the gate with error 0.5 (scale-normalised error "
            "0.5 exceeds the f32 tolerance 1e-05); candidate k2 failed to compile: BLOCK = 3 is "
            "not a power of two");
  const nlohmann::json report = nlohmann::json::parse(decision_json(entrants, d, options(0.05)));
  EXPECT_EQ(report["winner"], "native");
  EXPECT_EQ(report["candidates"][1]["verdict"], "gate_failed");
  EXPECT_EQ(report["candidates"][1]["gate"]["error"], 0.5);
  EXPECT_EQ(report["candidates"][2]["detail"], "BLOCK = 3 is not a power of two");
}

TEST(Selector, AFasterCandidateWinsBesideARejectedOne) {
  std::vector<Entrant> entrants = ready(3);
  entrants[2].verdict = Verdict::Unsupported;
  entrants[2].detail = "bf16 needs MSL 3.1";
  FixedClock clock({2.0, 1.0, 0.0});
  const Decision d = select(entrants, clock.timer(), options(0.05));
  EXPECT_EQ(d.winner, 1u);
  EXPECT_NE(d.reason.find("; also candidate k2 is not supported here: bf16 needs MSL 3.1"),
            std::string::npos);
  const nlohmann::json report = nlohmann::json::parse(decision_json(entrants, d, options(0.05)));
  EXPECT_EQ(report["rounds"][0]["median_s"]["k1"], 1.0);
  EXPECT_EQ(report["rounds"][1]["order"], "backward");
  EXPECT_EQ(report["candidates"][2]["provisional_median_s"], nullptr);
}

}  // namespace
}  // namespace metile::tune
