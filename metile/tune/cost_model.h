// The target operation-cost model that ranks an autotuner's surviving configurations (seed
// 001, "Kernel Compilation"): per-thread operation counts of a kernel's Metal IR by class,
// loops weighted by their trip counts where the bounds are constants, then an estimated time
// on a Target from its launch cost, memory bandwidth and issue rates. It only orders
// candidates; the tournament still measures them (docs/tuning.md).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::tune {

// What one thread executes: each op once per iteration of its enclosing loops, an if/else as
// its costlier branch (count by count), a one-armed if as taken (masked tails: upper bounds).
struct OperationCounts {
  double device_bytes = 0;      // bytes loaded from and stored to device memory
  double memory_accesses = 0;   // device and threadgroup loads and stores
  double arithmetic = 0;        // integer and float arithmetic, compares, selects, casts
  double transcendental = 0;    // div, exp, log, sqrt, rsqrt, tanh, sin, cos
  double barriers = 0;          // threadgroup barriers
  double simd_collectives = 0;  // SIMD shuffles, broadcasts and reductions
  double matrix_mma = 0;        // matrix multiply-accumulates
  int64_t dynamic_loops = 0;    // loops whose trip count is not a constant: counted once
};

// Counts `metal` (a Metal IR kernel). InternalError on a Tile IR op.
OperationCounts count_operations(const ir::Kernel& metal);

struct CostEstimate {
  double microseconds = 0;  // launch + max(memory, issue)
  double launch_us = 0;
  double memory_us = 0;  // device bytes over the Target's bandwidth
  double issue_us = 0;   // weighted operations over the Target's issue rate
  nlohmann::json to_json() const;
};

// The estimated time of `threadgroups` threadgroups of `threads_per_threadgroup` threads each
// running `counts`, on `target`.
CostEstimate estimate_cost(const OperationCounts& counts, int64_t threadgroups,
                           int64_t threads_per_threadgroup, const target::Target& target);

nlohmann::json to_json(const OperationCounts& counts);

}  // namespace metile::tune
