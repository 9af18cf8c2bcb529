#include "metile/tune/selector.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>

#include "metile/support/errors.h"
#include "metile/tune/tournament.h"

namespace metile::tune {

namespace {
constexpr double kNotTimed = std::numeric_limits<double>::quiet_NaN();

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g ms", seconds * 1e3);
  return text;
}

std::string format(const char* pattern, double value) {
  char text[32];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string percent(double headroom) {
  return format("%g%%", headroom * 100);
}

// Runs `entrants` `passes` times, the order alternating from `first_forward`; the median
// seconds of each.
std::vector<double> interleaved_medians(const std::vector<size_t>& entrants, int passes,
                                        bool first_forward, const Timer& time, int& timings) {
  std::vector<std::vector<double>> samples(entrants.size());
  for (int pass = 0; pass < passes; ++pass) {
    const bool forward = (pass % 2 == 0) == first_forward;
    for (size_t k = 0; k < entrants.size(); ++k) {
      const size_t j = forward ? k : entrants.size() - 1 - k;
      samples[j].push_back(time(entrants[j]));
      ++timings;
    }
  }
  std::vector<double> medians;
  for (const std::vector<double>& s : samples) medians.push_back(median(s));
  return medians;
}

// Why each candidate that was not ready could not run, as one clause each.
std::string rejections(const std::vector<Entrant>& entrants) {
  std::string text;
  for (const Entrant& e : entrants) {
    std::string clause;
    switch (e.verdict) {
      case Verdict::Ready:
        continue;
      case Verdict::GateFailed:
        clause = "candidate " + e.name + " failed the gate with error " +
                 format("%.3g", e.gate.error) + " (" + e.gate.reason + ")";
        break;
      case Verdict::CompileFailed:
        clause = "candidate " + e.name + " failed to compile: " + e.detail;
        break;
      case Verdict::Unsupported:
        clause = "candidate " + e.name + " is not supported here: " + e.detail;
        break;
    }
    text += (text.empty() ? "" : "; ") + clause;
  }
  return text;
}

std::string with_rejections(std::string reason, const std::vector<Entrant>& entrants) {
  const std::string rejected = rejections(entrants);
  return rejected.empty() ? reason : reason + "; also " + rejected;
}
}  // namespace

Boundary parse_boundary(std::string_view name) {
  for (Boundary b : {Boundary::Primitive, Boundary::Graph, Boundary::QuantizedMlp})
    if (boundary_name(b) == name) return b;
  throw UserError("selector: boundary must be primitive, graph or quantized_mlp, got '" +
                  std::string(name) + "'");
}

std::string_view boundary_name(Boundary boundary) {
  switch (boundary) {
    case Boundary::Primitive:
      return "primitive";
    case Boundary::Graph:
      return "graph";
    case Boundary::QuantizedMlp:
      return "quantized_mlp";
  }
  METILE_ASSERT(false, "unknown boundary");
}

double boundary_headroom(Boundary boundary) {
  switch (boundary) {
    case Boundary::Primitive:
      return 0.05;
    case Boundary::Graph:
    case Boundary::QuantizedMlp:
      return 0.10;
  }
  METILE_ASSERT(false, "unknown boundary");
}

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::Ready:
      return "ready";
    case Verdict::GateFailed:
      return "gate_failed";
    case Verdict::CompileFailed:
      return "compile_failed";
    case Verdict::Unsupported:
      return "unsupported";
  }
  METILE_ASSERT(false, "unknown verdict");
}

std::string_view why_name(Why why) {
  switch (why) {
    case Why::Faster:
      return "faster";
    case Why::NoReadyCandidate:
      return "no_ready_candidate";
    case Why::NoHeadroom:
      return "no_headroom";
    case Why::Inconclusive:
      return "inconclusive";
  }
  METILE_ASSERT(false, "unknown reason");
}

Decision select(const std::vector<Entrant>& entrants, const Timer& time,
                const SelectorOptions& options) {
  METILE_ASSERT(!entrants.empty() && entrants[0].verdict == Verdict::Ready,
                "the selector's reference must be ready");
  METILE_ASSERT(options.samples > 0 && options.finalists > 0 && options.headroom >= 0,
                "selector options out of range");
  const std::string& reference = entrants[0].name;
  const std::string kept = reference + " kept: ";
  Decision d;
  d.provisional.assign(entrants.size(), kNotTimed);
  std::vector<size_t> ready;
  for (size_t i = 0; i < entrants.size(); ++i)
    if (entrants[i].verdict == Verdict::Ready) ready.push_back(i);
  if (ready.size() == 1) {
    d.why = Why::NoReadyCandidate;
    d.reason = kept + (entrants.size() == 1 ? "there is no candidate" : rejections(entrants));
    return d;
  }
  for (int w = 0; w < options.warmup; ++w)
    for (size_t i : ready) time(i), ++d.timings;
  const std::vector<double> provisional =
      interleaved_medians(ready, options.samples, true, time, d.timings);
  for (size_t k = 0; k < ready.size(); ++k) d.provisional[ready[k]] = provisional[k];

  std::vector<size_t> challengers(ready.begin() + 1, ready.end());
  std::stable_sort(challengers.begin(), challengers.end(),
                   [&](size_t a, size_t b) { return d.provisional[a] < d.provisional[b]; });
  const double reference_time = d.provisional[0];
  const size_t fastest = challengers.front();
  const double factor = 1.0 + options.headroom;
  auto against = [&](size_t i, double seconds, double reference_seconds) {
    return entrants[i].name + " took " + milliseconds(seconds) + " against " + reference + " " +
           milliseconds(reference_seconds) + " (" + format("%.3gx", reference_seconds / seconds) +
           ")";
  };
  if (!(d.provisional[fastest] * factor <= reference_time)) {
    d.why = Why::NoHeadroom;
    d.reason = with_rejections(kept + "no candidate has the " + percent(options.headroom) +
                                   " headroom in the provisional round: the fastest candidate " +
                                   against(fastest, d.provisional[fastest], reference_time),
                               entrants);
    return d;
  }
  challengers.resize(std::min(challengers.size(), options.finalists));
  d.finalists = {0};
  d.finalists.insert(d.finalists.end(), challengers.begin(), challengers.end());
  std::vector<int> wins(d.finalists.size(), 0);
  size_t winner = 0;
  bool decided = false;
  for (int round = 0; round < kTournamentRounds && !decided; ++round) {
    d.rounds.push_back(
        interleaved_medians(d.finalists, options.samples, round % 2 == 0, time, d.timings));
    const size_t w = round_winner(d.rounds.back(), options.headroom);
    d.round_winners.push_back(d.finalists[w]);
    if (++wins[w] >= kRoundsToWin) winner = w, decided = true;
  }
  std::vector<double> medians(d.finalists.size());
  for (size_t f = 0; f < d.finalists.size(); ++f) {
    std::vector<double> per_round;
    for (const std::vector<double>& r : d.rounds) per_round.push_back(r[f]);
    medians[f] = median(per_round);
  }
  const std::string played = std::to_string(d.rounds.size());
  if (!decided) {
    std::string names;
    for (size_t w : d.round_winners) names += (names.empty() ? "" : ", ") + entrants[w].name;
    d.why = Why::Inconclusive;
    d.reason = with_rejections(kept + "the tournament was inconclusive: the " + played +
                                   " finalist rounds were won by " + names + ", no entrant won " +
                                   std::to_string(kRoundsToWin),
                               entrants);
    return d;
  }
  if (winner == 0) {
    d.why = Why::NoHeadroom;
    d.reason = with_rejections(
        kept + "it won " + std::to_string(kRoundsToWin) + " of " + played + " finalist rounds (" +
            percent(options.headroom) +
            " headroom required): " + against(d.finalists[1], medians[1], medians[0]),
        entrants);
    return d;
  }
  d.winner = d.finalists[winner];
  d.why = Why::Faster;
  d.reason = with_rejections(entrants[d.winner].name + " chosen: it won " +
                                 std::to_string(kRoundsToWin) + " of " + played +
                                 " finalist rounds with the " + percent(options.headroom) +
                                 " headroom; " + against(d.winner, medians[winner], medians[0]),
                             entrants);
  return d;
}

std::string decision_json(const std::vector<Entrant>& entrants, const Decision& d,
                          const SelectorOptions& options) {
  using nlohmann::json;
  auto seconds = [](double s) { return std::isnan(s) ? json(nullptr) : json(s); };
  json candidates = json::array();
  for (size_t i = 0; i < entrants.size(); ++i) {
    const Entrant& e = entrants[i];
    json c = {{"name", e.name},
              {"reference", i == 0},
              {"verdict", verdict_name(e.verdict)},
              {"provisional_median_s", seconds(d.provisional.at(i))}};
    if (!e.detail.empty()) c["detail"] = e.detail;
    if (e.gated)
      c["gate"] = {{"passed", e.gate.passed},
                   {"error", std::isfinite(e.gate.error) ? json(e.gate.error) : json("inf")},
                   {"tolerance", e.gate.tolerance},
                   {"reason", e.gate.reason}};
    candidates.push_back(c);
  }
  json rounds = json::array();
  for (size_t r = 0; r < d.rounds.size(); ++r) {
    json medians = json::object();
    for (size_t f = 0; f < d.finalists.size(); ++f)
      medians[entrants[d.finalists[f]].name] = d.rounds[r][f];
    rounds.push_back({{"order", r % 2 == 0 ? "forward" : "backward"},
                      {"median_s", medians},
                      {"winner", entrants[d.round_winners[r]].name}});
  }
  json finalists = json::array();
  for (size_t f : d.finalists) finalists.push_back(entrants[f].name);
  json out = {{"reference", entrants[0].name},
              {"headroom", options.headroom},
              {"warmup", options.warmup},
              {"samples", options.samples},
              {"candidates", candidates},
              {"finalists", finalists},
              {"rounds", rounds},
              {"winner", entrants[d.winner].name},
              {"switched", d.winner != 0},
              {"why", why_name(d.why)},
              {"reason", d.reason},
              {"timings", d.timings}};
  return out.dump(2);
}

}  // namespace metile::tune
