// The selector of the guarded runtime (seed 001, "Guarded Runtime"; docs/tuning.md): the
// native operation (entrant 0, the reference) and generated candidates enter one selector.
// What happened to a candidate before timing (prepared, gate failed, compile failed,
// unsupported) is the caller's to find out and is recorded here; the ready ones are timed:
//
//   1. warm-up: each ready entrant runs `warmup` times, untimed;
//   2. provisional round: `samples` passes over the ready entrants, the order alternating
//      (forward, backward, ...); the median per entrant;
//   3. finalists: the reference and the `finalists` challengers with the fastest provisional
//      medians, unless none of them has the headroom there (then the reference is kept);
//   4. finalist rounds: up to kTournamentRounds rounds of `samples` passes, the order
//      alternating, each judged on its medians by round_winner (tournament.h); the entrant
//      that wins kRoundsToWin rounds is chosen. No such entrant: inconclusive, the reference
//      is kept.
//
// Every way of not switching keeps the reference and says why, naming the candidate and what
// happened to it (a fallback is never silent, and never blamed on the generated code when the
// framework simply was not beaten). The timer is injected: on a device it launches and
// synchronises, in tests it is a fake clock.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "metile/tune/gate.h"

namespace metile::tune {

// Where the candidate replaces the framework: the headroom it must win by (DESIGN.md).
enum class Boundary { Primitive, Graph, QuantizedMlp };
Boundary parse_boundary(std::string_view name);  // "primitive", "graph", "quantized_mlp"
std::string_view boundary_name(Boundary boundary);
double boundary_headroom(Boundary boundary);  // 5% for primitives, 10% for the others

// What became of an entrant before timing.
enum class Verdict { Ready, GateFailed, CompileFailed, Unsupported };
std::string_view verdict_name(Verdict verdict);

struct Entrant {
  std::string name;
  Verdict verdict = Verdict::Ready;
  std::string detail;  // the compile or unsupported message
  bool gated = false;  // whether the gate ran (autotuned configurations are not gated)
  GateResult gate;     // its result
};

// Runs entrant `i` once, synchronised, and returns its seconds.
using Timer = std::function<double(size_t entrant)>;

struct SelectorOptions {
  double headroom = 0.05;
  int warmup = 1;
  int samples = 5;
  size_t finalists = 2;  // challengers in the finalist rounds
};

enum class Why { Faster, NoReadyCandidate, NoHeadroom, Inconclusive };
std::string_view why_name(Why why);

struct Decision {
  size_t winner = 0;  // 0: the reference is kept
  Why why = Why::NoReadyCandidate;
  std::string reason;                       // one sentence naming the candidates and the figures
  std::vector<double> provisional;          // median seconds per entrant (NaN: not timed)
  std::vector<size_t> finalists;            // entrant indices, the reference first
  std::vector<std::vector<double>> rounds;  // [round][finalist] median seconds
  std::vector<size_t> round_winners;        // entrant index per round played
  int timings = 0;                          // timer calls, warm-up included
};

// Runs the selection. Entrant 0 must be Ready; options.samples and finalists must be positive.
Decision select(const std::vector<Entrant>& entrants, const Timer& time,
                const SelectorOptions& options);

// The decision as JSON text: the options, every entrant (verdict, detail, gate error and
// tolerance, provisional median), the finalist rounds (medians by name, winner), the winner
// and why.
std::string decision_json(const std::vector<Entrant>& entrants, const Decision& decision,
                          const SelectorOptions& options);

}  // namespace metile::tune
