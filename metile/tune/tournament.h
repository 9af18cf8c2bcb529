// The order-interleaved tournament: entrant 0 is the reference (Dinic for max-flow dispatch,
// the framework's own op for the guarded runtime), the others are challengers. Three rounds,
// the entrants' order alternating (forward, backward, forward); a challenger wins a round only
// with the required headroom over the reference in that round, and the entrant that wins two
// rounds is chosen (the third round is skipped once two are won). The headroom is the
// caller's: 10% for max-flow engines and graph boundaries, 5% for primitives (DESIGN.md).
//
// It runs on an abstract timer, so its decisions can be tested on synthetic times; what it
// times (engines under a deadline, kernels on a device) is the caller's runner.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

namespace metile::tune {

inline constexpr int kTournamentRounds = 3;
inline constexpr int kRoundsToWin = kTournamentRounds / 2 + 1;

// The rule for one round on seconds per entrant (infinity: stopped, lost): the fastest
// challenger wins if seconds * (1 + headroom) <= the reference's seconds, else the reference.
size_t round_winner(const std::vector<double>& seconds, double headroom);

// A trial runs entrant `i` once, for round `round` (0-based), under a limit in seconds
// (infinity: none) and reports how it went.
struct TournamentTrial {
  enum class Status { Completed, Stopped, Unable };  // Unable: the entrant cannot take the input
  Status status = Status::Completed;
  double seconds = 0;  // Completed only
};
using TournamentRunner =
    std::function<TournamentTrial(size_t entrant, int round, double limit_seconds)>;

struct TournamentRecord {
  size_t winner = 0;
  std::vector<size_t> round_winners;         // one per round played
  std::vector<std::vector<double>> seconds;  // [round][entrant]; infinity: stopped, lost
  std::vector<char> unable;                  // per entrant
  int trials = 0;
};

// Plays the tournament among `entrants` with the given headroom (0.10: 10%);
// `first_budget_seconds` is the first provisional limit of round one (see tournament.cc for the
// limits and why they cannot change a decision). The reference must take every input.
TournamentRecord play_tournament(size_t entrants, const TournamentRunner& run, double headroom,
                                 double first_budget_seconds = 1e-3);

// The decision the tournament must reproduce: every entrant's full time in every round
// ([round][entrant]), each round judged by round_winner, two round wins decide (the reference
// if no entrant wins two rounds, possible only with three or more entrants).
size_t tournament_winner_from_full_times(const std::vector<std::vector<double>>& seconds,
                                         double headroom);

}  // namespace metile::tune
