// The schedule step of the pipeline: how many threads share the kernel's tiles (see
// docs/lowering.md, "Thread plan"). Lowering implements whatever plan it is given. This is the
// file plan_schedule (seed 002: backend, SIMD-group geometry, staging, as a SchedulePlan)
// replaces; the pipeline step keeps its place between the Tile IR passes and lower_to_metal.
#pragma once

#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/ir/thread_layout.h"
#include "metile/target/target.h"

namespace metile::lower {

// How many threads share the kernel's tiles, which thread owns which element, and why.
struct ThreadPlan {
  ThreadPlan() = default;
  ThreadPlan(int threads, std::string why)
      : threads_per_threadgroup(threads), reason(std::move(why)) {}

  int threads_per_threadgroup = 0;
  std::string reason;
  // The layout of every tile whose size matches one of these (each over the plan's
  // threads); a tile of another size gets the striped identity (plan_ownership.h).
  std::vector<ir::ThreadLayout> layouts;
  std::string ownership = "striped: the default";
  // The kernel gives tiles layouts itself (arange {layout}, convert_layout): the plan has
  // their thread count, and every unannotated tile is the identity of their geometry.
  bool explicit_layouts = false;
  // How `dot` lowers: on SIMD-group matrix fragments where the target has them and the SIMD
  // groups tile the output (the default), or, when false, always through the generic exchange.
  bool dot_matrix_fragments = true;
  // Dot operand tiles whose layouts give each thread runs of this many consecutive row
  // elements (dot_operand_vectors.h), loaded per run from recomputed addresses; 0: none.
  int64_t operand_vector_run = 0;
};

// A power of two in [simd_width, max_threads_per_threadgroup]: the largest tile's size / 4,
// clamped to that range and to the target's default ceiling; the kernel attribute
// `num_threads` overrides the rule (UserError unless it is a power of two within the target's
// limits). Ownership comes from plan_ownership. A kernel with explicit layouts runs on their
// thread count (UserError when its layouts disagree, the target cannot launch it, or
// num_threads asks for another count); ownership is never remapped.
ThreadPlan plan_threads(const ir::Kernel& tile, const target::Target& target);

// UserError unless the plan's thread count is a power of two the target allows and its
// layouts, one per tile size, each cover that many threads; lowering checks a plan it did not
// make.
void check_thread_plan(const ThreadPlan& plan, const target::Target& target);

}  // namespace metile::lower
