// The engine boundary. Every max-flow engine implements MaxFlowSolver; the registry holds them,
// and an engine joins automatic dispatch only after it has passed a differential test against
// Dinic, the reference (seed 000: a new engine is differential-tested before it participates).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "metile/flow/deadline.h"
#include "metile/flow/flow_network.h"

namespace metile::flow {

class MaxFlowSolver {
 public:
  virtual ~MaxFlowSolver() = default;
  virtual std::string name() const = 0;
  // Must return the exact value and the canonical cut: vertices reachable from s in the final
  // residual graph of a maximum flow (unique for a given network, whatever the engine).
  virtual MaxFlowResult solve(const FlowNetwork& net, int source, int sink) const = 0;
  // The same, but an engine may throw SolveCancelled once `deadline` passes (the dispatch
  // tournament stops entrants that have already lost). Engines that cannot stop early need
  // not override this.
  virtual MaxFlowResult solve_before(const FlowNetwork& net, int source, int sink,
                                     Deadline deadline) const {
    return solve(net, source, sink);
  }
};

std::unique_ptr<MaxFlowSolver> make_dinic_solver();
std::unique_ptr<MaxFlowSolver> make_push_relabel_solver();

// One differential-test case.
struct FlowProblem {
  FlowNetwork network;
  int source = 0;
  int sink = 1;
};

struct DifferentialReport {
  int problems = 0;
  int mismatches = 0;
  std::string first_mismatch;  // what differed, on which problem
  bool passed() const { return problems > 0 && mismatches == 0; }
};

// Random networks covering what compilers and benchmarks produce: sparse and dense, layered,
// parallel arcs, zero and infinite capacities, unreachable sinks. Deterministic in `seed`.
std::vector<FlowProblem> differential_corpus(int count, uint64_t seed);

// Solves every problem with both engines and compares value, unbounded flag and source side.
DifferentialReport differential_test(const MaxFlowSolver& candidate, const MaxFlowSolver& reference,
                                     const std::vector<FlowProblem>& corpus);

// Sum of the capacities of arcs leaving `source_side` (saturating at kInfiniteCapacity).
Capacity cut_capacity(const FlowNetwork& net, const std::vector<char>& source_side);

// Thread-safe. Solvers are never removed, so the pointers it hands out stay valid.
class SolverRegistry {
 public:
  SolverRegistry();  // holds "dinic" (the reference) and "push-relabel", both qualified
  static SolverRegistry& global();

  // UserError if the name is taken. The engine does not take part in dispatch yet.
  void add_candidate(std::unique_ptr<MaxFlowSolver> solver);
  // Differential-tests a candidate against Dinic; it joins dispatch iff the test passes.
  DifferentialReport qualify(const std::string& name, const std::vector<FlowProblem>& corpus);

  const MaxFlowSolver& reference() const;                       // Dinic
  const MaxFlowSolver* find(const std::string& name) const;     // nullptr if unknown
  const MaxFlowSolver& get(const std::string& name) const;      // UserError if unknown
  std::vector<const MaxFlowSolver*> dispatch_entrants() const;  // qualified, reference first
  std::vector<std::string> names() const;

 private:
  struct Entry {
    std::unique_ptr<MaxFlowSolver> solver;
    bool qualified = false;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace metile::flow
