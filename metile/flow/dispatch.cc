#include "metile/flow/dispatch.h"

#include <algorithm>
#include <chrono>

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

std::string choose_tournament_winner(const std::vector<std::pair<std::string, double>>& medians) {
  METILE_ASSERT(!medians.empty(), "tournament without entrants");
  const auto& [reference, reference_time] = medians.front();
  std::string winner = reference;
  double best = reference_time;
  for (size_t i = 1; i < medians.size(); ++i) {
    const auto& [name, time] = medians[i];
    if (time * (1.0 + kRequiredHeadroom) <= reference_time && time < best) {
      winner = name;
      best = time;
    }
  }
  return winner;
}

namespace {

// Rounds alternate the entrants' order (forward, backward, forward) so neither engine always
// runs on a cache warmed by the other.
MaxFlowResult run_tournament(const FlowNetwork& net, int s, int t,
                             const std::vector<const MaxFlowSolver*>& entrants,
                             DispatchTrace& trace) {
  const size_t k = entrants.size();
  std::vector<std::vector<double>> seconds(k);
  std::vector<MaxFlowResult> results(k);
  std::vector<char> failed(k, 0);
  for (int round = 0; round < kTournamentRounds; ++round) {
    for (size_t j = 0; j < k; ++j) {
      const size_t i = round % 2 == 0 ? j : k - 1 - j;
      if (failed[i]) continue;
      const auto start = std::chrono::steady_clock::now();
      try {
        results[i] = entrants[i]->solve(net, s, t);
      } catch (const UserError&) {
        // An engine that cannot take this network (e.g. push-relabel's 64-bit excess bound)
        // drops out; the reference never does, so its errors propagate.
        if (i == 0) throw;
        failed[i] = true;
        continue;
      }
      seconds[i].push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
  }
  for (size_t i = 1; i < k; ++i)
    if (!failed[i] &&
        (results[i].value != results[0].value || results[i].source_side != results[0].source_side))
      throw InternalError("max-flow tournament: " + entrants[i]->name() + " disagrees with " +
                          entrants[0]->name() + " (value " + std::to_string(results[i].value) +
                          " vs " + std::to_string(results[0].value) + ")");
  trace.median_seconds.clear();
  for (size_t i = 0; i < k; ++i) {
    if (failed[i]) continue;
    std::sort(seconds[i].begin(), seconds[i].end());
    trace.median_seconds.emplace_back(entrants[i]->name(), seconds[i][seconds[i].size() / 2]);
  }
  trace.solver = choose_tournament_winner(trace.median_seconds);
  for (size_t i = 0; i < k; ++i)
    if (entrants[i]->name() == trace.solver) return std::move(results[i]);
  throw InternalError("tournament winner is not an entrant");
}

}  // namespace

MaxFlowResult dispatch_max_flow(const FlowNetwork& net, int source, int sink, DispatchCache& cache,
                                DispatchTrace* trace, const SolverRegistry& registry) {
  validate_terminals(net, source, sink);
  DispatchTrace local;
  DispatchTrace& tr = trace ? *trace : local;
  tr.median_seconds.clear();
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
  MaxFlowResult result = run_tournament(net, source, sink, registry.dispatch_entrants(), tr);
  cache.insert(key, tr.solver);
  return result;
}

}  // namespace metile::flow
