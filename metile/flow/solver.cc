#include "metile/flow/solver.h"

#include <random>

#include "metile/flow/dinic.h"
#include "metile/flow/push_relabel.h"
#include "metile/flow/solve_prelude.h"
#include "metile/support/errors.h"

namespace metile::flow {

namespace {

using Engine = Capacity (*)(ResidualGraph&, int, int, Deadline);

// Shared shape of the in-tree engines: prelude, residual graph, algorithm, canonical cut.
MaxFlowResult solve_with(const FlowNetwork& net, int s, int t, const char* name, Engine engine,
                         Deadline deadline) {
  validate_terminals(net, s, t);
  if (auto unbounded = unbounded_result(net, s, t, name)) return *unbounded;
  ResidualGraph g = ResidualGraph::build(net, finite_stand_in_for_infinity(net));
  MaxFlowResult result;
  result.value = engine(g, s, t, deadline);
  result.source_side = reachable_in_residual(g, s);
  result.solver = name;
  METILE_ASSERT(!result.source_side[t], std::string(name) + " ended with an augmenting path");
  return result;
}

class DinicSolver final : public MaxFlowSolver {
 public:
  std::string name() const override { return "dinic"; }
  MaxFlowResult solve(const FlowNetwork& net, int s, int t) const override {
    return solve_before(net, s, t, Deadline());
  }
  MaxFlowResult solve_before(const FlowNetwork& net, int s, int t, Deadline d) const override {
    return solve_with(net, s, t, "dinic", run_dinic, d);
  }
};

Capacity run_push_relabel_default(ResidualGraph& g, int s, int t, Deadline d) {
  return run_push_relabel(g, s, t, d);
}

class PushRelabelSolver final : public MaxFlowSolver {
 public:
  std::string name() const override { return "push-relabel"; }
  MaxFlowResult solve(const FlowNetwork& net, int s, int t) const override {
    return solve_before(net, s, t, Deadline());
  }
  MaxFlowResult solve_before(const FlowNetwork& net, int s, int t, Deadline d) const override {
    return solve_with(net, s, t, "push-relabel", run_push_relabel_default, d);
  }
};

}  // namespace

std::unique_ptr<MaxFlowSolver> make_dinic_solver() {
  return std::make_unique<DinicSolver>();
}
std::unique_ptr<MaxFlowSolver> make_push_relabel_solver() {
  return std::make_unique<PushRelabelSolver>();
}

Capacity cut_capacity(const FlowNetwork& net, const std::vector<char>& source_side) {
  Capacity total = 0;
  for (int a = 0; a < net.arc_count(); ++a) {
    if (!source_side[net.arc_from(a)] || source_side[net.arc_to(a)]) continue;
    total = std::min(kInfiniteCapacity, total + net.arc_capacity(a));
  }
  return total;
}

std::vector<FlowProblem> differential_corpus(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  std::vector<FlowProblem> corpus;
  for (int i = 0; i < count; ++i) {
    const int n = uniform(2, 60);
    const int arcs = uniform(0, n * 4);
    const int infinite_percent = uniform(0, 1) ? uniform(0, 15) : 0;
    const bool layered = uniform(0, 2) == 0;
    FlowNetwork::Builder b(n);
    for (int k = 0; k < arcs; ++k) {
      int u = uniform(0, n - 1), v = uniform(0, n - 1);
      if (layered && u > v) std::swap(u, v);  // DAG-like, as fusion networks are
      Capacity c = uniform(0, 9) == 0 ? 0 : uniform(1, 1000);
      if (uniform(0, 99) < infinite_percent) c = kInfiniteCapacity;
      b.add_arc(u, v, c);
      if (uniform(0, 19) == 0) b.add_arc(u, v, uniform(0, 50));  // parallel arc
    }
    FlowProblem p{std::move(b).build(), 0, n - 1};
    if (uniform(0, 3) == 0) std::swap(p.source, p.sink);
    corpus.push_back(std::move(p));
  }
  return corpus;
}

DifferentialReport differential_test(const MaxFlowSolver& candidate, const MaxFlowSolver& reference,
                                     const std::vector<FlowProblem>& corpus) {
  DifferentialReport report;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const FlowProblem& p = corpus[i];
    ++report.problems;
    std::string why;
    try {
      const MaxFlowResult want = reference.solve(p.network, p.source, p.sink);
      const MaxFlowResult got = candidate.solve(p.network, p.source, p.sink);
      if (got.value != want.value || got.unbounded != want.unbounded)
        why = "value " + std::to_string(got.value) + " != " + std::to_string(want.value);
      else if (got.source_side != want.source_side)
        why = "source side differs";
      else if (!got.unbounded && cut_capacity(p.network, got.source_side) != got.value)
        why = "cut capacity != flow value";
    } catch (const std::exception& e) {
      why = std::string("threw: ") + e.what();
    }
    if (why.empty()) continue;
    if (++report.mismatches == 1)
      report.first_mismatch = "problem " + std::to_string(i) + " (" +
                              std::to_string(p.network.vertex_count()) + " vertices, " +
                              std::to_string(p.network.arc_count()) + " arcs): " + why;
  }
  return report;
}

SolverRegistry::SolverRegistry() {
  entries_.push_back({make_dinic_solver(), true});
  entries_.push_back({make_push_relabel_solver(), true});
}

SolverRegistry& SolverRegistry::global() {
  static SolverRegistry registry;
  return registry;
}

void SolverRegistry::add_candidate(std::unique_ptr<MaxFlowSolver> solver) {
  METILE_ASSERT(solver != nullptr, "null solver");
  std::lock_guard lock(mutex_);
  for (const Entry& e : entries_)
    if (e.solver->name() == solver->name())
      throw UserError("max-flow solver '" + solver->name() + "' is already registered");
  entries_.push_back({std::move(solver), false});
}

DifferentialReport SolverRegistry::qualify(const std::string& name,
                                           const std::vector<FlowProblem>& corpus) {
  const MaxFlowSolver& candidate = get(name);
  DifferentialReport report = differential_test(candidate, reference(), corpus);
  std::lock_guard lock(mutex_);
  for (Entry& e : entries_)
    if (e.solver.get() == &candidate) e.qualified = report.passed();
  return report;
}

const MaxFlowSolver& SolverRegistry::reference() const {
  std::lock_guard lock(mutex_);
  return *entries_.front().solver;
}

const MaxFlowSolver* SolverRegistry::find(const std::string& name) const {
  std::lock_guard lock(mutex_);
  for (const Entry& e : entries_)
    if (e.solver->name() == name) return e.solver.get();
  return nullptr;
}

const MaxFlowSolver& SolverRegistry::get(const std::string& name) const {
  if (const MaxFlowSolver* s = find(name)) return *s;
  std::string known;
  for (const std::string& n : names()) known += (known.empty() ? "" : ", ") + n;
  throw UserError("unknown max-flow solver '" + name + "' (known: " + known + ")");
}

std::vector<const MaxFlowSolver*> SolverRegistry::dispatch_entrants() const {
  std::lock_guard lock(mutex_);
  std::vector<const MaxFlowSolver*> out;
  for (const Entry& e : entries_)
    if (e.qualified) out.push_back(e.solver.get());
  return out;
}

std::vector<std::string> SolverRegistry::names() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.solver->name());
  return out;
}

}  // namespace metile::flow
