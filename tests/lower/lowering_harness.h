// Lowers a Tile IR kernel the way the pipeline does (verify, expand_tensor_access,
// plan_threads, lower_to_metal) and checks both IRs with their verifiers.
#pragma once

#include <string>
#include <vector>

#include "metile/lower/expand_tensor_access.h"
#include "metile/lower/lower_to_metal.h"
#include "metile/lower/plan_threads.h"
#include "metile/target/target.h"
#include "tests/lower/metal_interpreter.h"

namespace metile::lower_test {

const target::Target& test_target();  // apple-m3

// threads = 0: plan_threads decides; otherwise the plan is forced to that many threads.
lower::LoweringResult lower_checked(ir::Kernel tile, int threads = 0);

// Lowers with a plan made by the test (its layouts included).
lower::LoweringResult lower_with_plan(ir::Kernel tile, const lower::ThreadPlan& plan);

// Counts of ops of one kind in a kernel, nested regions included.
int count_ops(const ir::Kernel& k, ir::OpKind kind);

// Whether any value of the kernel is a tile or a descriptor.
bool has_tiles(const ir::Kernel& k);

}  // namespace metile::lower_test
