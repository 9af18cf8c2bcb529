// Resource checks against the Target's limits, made before any work that grows with the
// kernel's size: a kernel or launch too large for the device fails in milliseconds with
// OutOfResources naming the kernel, the requested geometry and the limit, instead of lowering
// to megabytes of code or running a grid for hours.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "metile/ir/ir.h"
#include "metile/lower/plan_threads.h"
#include "metile/target/target.h"

namespace metile {

// The pipeline step check_resources (after plan_threads, before lowering): the largest tile
// against target.max_tile_elements; the elements that tile puts in each thread (32-bit
// registers each, two for i64) against target.registers_per_thread; the plan's threads per
// threadgroup against target.max_threads_per_threadgroup.
void check_resources(const ir::Kernel& tile, const lower::ThreadPlan& plan,
                     const target::Target& target);

// Before a launch: each grid dimension within target.max_grid and in [1, ...], the product
// within target.max_threadgroups_per_launch.
void check_grid(const std::string& kernel, std::array<int64_t, 3> grid,
                const target::Target& target);

}  // namespace metile
