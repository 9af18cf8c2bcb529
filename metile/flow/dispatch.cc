#include "metile/flow/dispatch.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "metile/flow/solve_prelude.h"
#include "metile/support/errors.h"
#include "metile/tune/tournament.h"

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
    tune::TournamentTrial trial;
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
      trial.status = tune::TournamentTrial::Status::Stopped;
    } catch (const UserError&) {
      // An engine that cannot take this network (e.g. push-relabel's 64-bit excess bound)
      // drops out; the reference never does, so its errors propagate.
      if (i == 0) throw;
      trial.status = tune::TournamentTrial::Status::Unable;
    }
    return trial;
  };
  const tune::TournamentRecord record = tune::play_tournament(k, run, kRequiredHeadroom);
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
