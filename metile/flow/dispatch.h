// Automatic engine choice (seed 000, "Max-Flow Selection"):
//  - networks below 32 vertices (what the fusion planner builds) go straight to Dinic;
//  - larger ones enter a three-round, order-interleaved tournament between the qualified
//    engines (Dinic and push-relabel); a challenger wins a round only with >= 10% headroom
//    over Dinic in that round, and the engine that wins two rounds is chosen (the third round
//    is skipped once two are won);
//  - the decision is cached by topology and capacities (and terminals), so repeats skip the
//    tournament.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "metile/flow/flow_network.h"
#include "metile/flow/solver.h"

namespace metile::flow {

inline constexpr int kDinicOnlyBelowVertices = 32;
inline constexpr int kTournamentRounds = 3;
inline constexpr double kRequiredHeadroom = 0.10;  // challenger time * 1.10 <= Dinic time
inline constexpr int kRoundsToWin = kTournamentRounds / 2 + 1;

struct DispatchStats {
  uint64_t small_network = 0;  // dispatched to Dinic by size
  uint64_t cache_hits = 0;
  uint64_t tournaments = 0;
};

// What one automatic dispatch did.
struct DispatchTrace {
  enum class Path { SmallNetwork, CacheHit, Tournament };
  Path path = Path::SmallNetwork;
  std::string solver;
  // Tournament only: median seconds per entrant over the rounds played (infinity where the
  // entrant was stopped once it could no longer win the round), the winner of each round
  // played (2 or 3 rounds), and the solves started (completed or stopped).
  std::vector<std::pair<std::string, double>> median_seconds;
  std::vector<std::string> round_winners;
  int solves = 0;
};

// Thread-safe decision cache: (topology hash, vertex count, arc count, source, sink) -> engine.
class DispatchCache {
 public:
  using Key = std::tuple<uint64_t, int, int, int, int>;
  static Key key_of(const FlowNetwork& net, int source, int sink);

  std::optional<std::string> find(const Key& key);         // counts a hit
  void insert(const Key& key, const std::string& solver);  // the first decision wins
  void count_small_network();
  void count_tournament();
  void clear();  // forgets decisions and statistics
  size_t size() const;
  DispatchStats stats() const;

 private:
  mutable std::mutex mutex_;
  std::map<Key, std::string> decisions_;
  DispatchStats stats_;
};

DispatchCache& global_dispatch_cache();

// The rule for one round (the first entry is the reference, Dinic): the fastest challenger
// wins if its time with 10% headroom still beats the reference's (infinity: stopped).
std::string choose_tournament_winner(
    const std::vector<std::pair<std::string, double>>& round_seconds);

// The tournament itself, on an abstract timer so that its decisions can be tested on
// synthetic times. A trial runs entrant `i` (0 is the reference) once, for round `round`
// (0-based), under a limit in seconds (infinity: none) and reports how it went.
struct TournamentTrial {
  enum class Status { Completed, Stopped, Unable };  // Unable: the engine cannot take the network
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

// Plays the tournament among `entrants` engines; `first_budget_seconds` is the first
// provisional limit of round one (see dispatch.cc for the limits and why they are sound).
TournamentRecord play_tournament(size_t entrants, const TournamentRunner& run,
                                 double first_budget_seconds = 1e-3);

// The decision the tournament must reproduce: every entrant's full time in every round
// ([round][entrant]), each round judged by the headroom rule, two round wins decide (the
// reference if no engine wins two rounds, possible only with three or more entrants).
size_t tournament_winner_from_full_times(const std::vector<std::vector<double>>& seconds);

MaxFlowResult dispatch_max_flow(const FlowNetwork& net, int source, int sink,
                                DispatchCache& cache = global_dispatch_cache(),
                                DispatchTrace* trace = nullptr,
                                const SolverRegistry& registry = SolverRegistry::global());

}  // namespace metile::flow
