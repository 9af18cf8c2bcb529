// Automatic engine choice (seed 000, "Max-Flow Selection"):
//  - networks below 32 vertices (what the fusion planner builds) go straight to Dinic;
//  - larger ones enter the order-interleaved tournament of metile/tune between the qualified
//    engines (Dinic, the reference, and push-relabel) with 10% headroom: a challenger wins a
//    round only if its time * 1.10 <= Dinic's in that round, two round wins decide;
//  - the decision is cached by topology and capacities (and terminals), so repeats skip the
//    tournament.
#pragma once

#include <cstdint>
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
inline constexpr double kRequiredHeadroom = 0.10;  // challenger time * 1.10 <= Dinic time

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

MaxFlowResult dispatch_max_flow(const FlowNetwork& net, int source, int sink,
                                DispatchCache& cache = global_dispatch_cache(),
                                DispatchTrace* trace = nullptr,
                                const SolverRegistry& registry = SolverRegistry::global());

}  // namespace metile::flow
