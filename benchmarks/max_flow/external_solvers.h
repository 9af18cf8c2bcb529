// The reference libraries the benchmark measures against: BGL push_relabel_max_flow, BGL
// boykov_kolmogorov_max_flow and LEMON Preflow. Each builds its graph once per instance
// (outside the timed region); solve() is what gets timed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "benchmarks/max_flow/generators.h"

namespace metile::flow::bench {

class ExternalSolver {
 public:
  virtual ~ExternalSolver() = default;
  virtual std::string name() const = 0;
  virtual Capacity solve() = 0;
};

// Infinite arcs become one more than the sum of the finite capacities.
std::vector<std::unique_ptr<ExternalSolver>> make_external_solvers(const Instance& instance);

}  // namespace metile::flow::bench
