#include "metile/flow/dispatch.h"

#include <algorithm>
#include <chrono>
#include <limits>

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

using Clock = std::chrono::steady_clock;

// Rounds alternate the entrants' order (forward, backward, forward) so neither engine always
// runs on a cache warmed by the other. An entrant that runs past twice the fastest completed
// solve has lost its round and is stopped there (its time counts as infinite). Until some
// entrant has completed, the entrants take turns under a budget that grows fourfold, so the
// tournament costs a small multiple of the fastest engine, never the slowest.
class Tournament {
 public:
  Tournament(const FlowNetwork& net, int s, int t,
             const std::vector<const MaxFlowSolver*>& entrants)
      : net_(net),
        s_(s),
        t_(t),
        entrants_(entrants),
        seconds_(entrants.size()),
        results_(entrants.size()),
        failed_(entrants.size(), 0) {}

  MaxFlowResult run(DispatchTrace& trace) {
    const size_t k = entrants_.size();
    for (int round = 0; round < kTournamentRounds; ++round) {
      std::vector<size_t> order(k);
      for (size_t j = 0; j < k; ++j) order[j] = round % 2 == 0 ? j : k - 1 - j;
      if (round == 0) deepen_until_one_completes(order);
      for (size_t i : order)
        if (seconds_[i].size() <= static_cast<size_t>(round)) attempt(i, 2.0 * best_ + 1e-4);
    }
    check_agreement();
    trace.median_seconds.clear();
    for (size_t i = 0; i < k; ++i) {
      if (failed_[i]) continue;
      std::sort(seconds_[i].begin(), seconds_[i].end());
      trace.median_seconds.emplace_back(entrants_[i]->name(), seconds_[i][seconds_[i].size() / 2]);
    }
    trace.solver = choose_tournament_winner(trace.median_seconds);
    for (size_t i = 0; i < k; ++i)
      if (entrants_[i]->name() == trace.solver && results_[i]) return std::move(*results_[i]);
    // The winner's runs were all stopped (possible only through timing noise): use the
    // reference's completed answer if there is one, else solve once more without a limit.
    for (size_t i = 0; i < k; ++i)
      if (results_[i]) {
        trace.solver = entrants_[i]->name();
        return std::move(*results_[i]);
      }
    return entrants_[0]->solve(net_, s_, t_);
  }

 private:
  void deepen_until_one_completes(const std::vector<size_t>& order) {
    for (double budget = 1e-3; best_ == kNever; budget *= 4)
      for (size_t i : order)
        if (best_ == kNever && !failed_[i]) attempt(i, budget, /*record_loss=*/false);
  }

  // One timed solve under a limit of `limit_seconds`. A stopped solve records an infinite time
  // (it lost this round) unless we are still searching for the first completion.
  void attempt(size_t i, double limit_seconds, bool record_loss = true) {
    if (failed_[i]) return;
    const auto start = Clock::now();
    const Deadline deadline(start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(limit_seconds)));
    try {
      MaxFlowResult r = entrants_[i]->solve_before(net_, s_, t_, deadline);
      const double took = std::chrono::duration<double>(Clock::now() - start).count();
      seconds_[i].push_back(took);
      best_ = std::min(best_, took);
      results_[i] = std::move(r);
    } catch (const SolveCancelled&) {
      if (record_loss) seconds_[i].push_back(kNever);
    } catch (const UserError&) {
      // An engine that cannot take this network (e.g. push-relabel's 64-bit excess bound)
      // drops out; the reference never does, so its errors propagate.
      if (i == 0) throw;
      failed_[i] = 1;
    }
  }

  void check_agreement() const {
    const MaxFlowResult* first = nullptr;
    size_t first_index = 0;
    for (size_t i = 0; i < entrants_.size(); ++i) {
      if (!results_[i]) continue;
      if (!first) {
        first = &*results_[i];
        first_index = i;
      } else if (results_[i]->value != first->value ||
                 results_[i]->source_side != first->source_side) {
        throw InternalError("max-flow tournament: " + entrants_[i]->name() + " disagrees with " +
                            entrants_[first_index]->name() + " (value " +
                            std::to_string(results_[i]->value) + " vs " +
                            std::to_string(first->value) + ")");
      }
    }
  }

  static constexpr double kNever = std::numeric_limits<double>::infinity();
  const FlowNetwork& net_;
  const int s_, t_;
  const std::vector<const MaxFlowSolver*>& entrants_;
  std::vector<std::vector<double>> seconds_;
  std::vector<std::optional<MaxFlowResult>> results_;
  std::vector<char> failed_;
  double best_ = kNever;
};

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
  const std::vector<const MaxFlowSolver*> entrants = registry.dispatch_entrants();
  MaxFlowResult result = Tournament(net, source, sink, entrants).run(tr);
  cache.insert(key, tr.solver);
  return result;
}

}  // namespace metile::flow
