// The table of contents of meTile: every stage, in order, named. Each step is a pass
// registered under its name (pass_registry.cc) and implemented in the file named after it;
// METILE_DEBUG writes the IR after each step (pipeline_steps.h).

#include "metile/pipeline.h"

#include "metile/ir/printer.h"
#include "metile/pass_registry.h"
#include "metile/pipeline_steps.h"
#include "metile/replay_log.h"

namespace metile {

PipelineResult compile_to_source(ir::Kernel kernel, const PipelineOptions& options) {
  const target::Target& target = options.target ? *options.target : target::default_target();
  PipelineSteps steps(kernel.name, target, options);
  const std::string replay = replay_dir();
  const std::string input_text = replay.empty() ? "" : ir::print(kernel);

  // 1. The traced kernel must be valid Tile IR; a frontend bug shows up here, not later.
  steps.input(kernel);

  // 2. Target-independent Tile IR passes.
  kernel = steps.run("apply_math_mode", std::move(kernel));
  kernel = steps.run("canonicalize", std::move(kernel));
  //    A pointer tile a loop advances by a uniform step (Triton's `a_ptrs += BLOCK_K * stride`)
  //    is carried as its initial tile plus a scalar offset, which lowering can recompute.
  kernel = steps.run("rebase_carried_pointers", std::move(kernel));
  //    A descriptor GEMM the target's tensor backend will take becomes one op (its K loop,
  //    pointwise epilogue and store) before descriptors become pointer arithmetic.
  kernel = steps.run("form_descriptor_matmul", std::move(kernel));
  //    While the descriptors are still whole: is the kernel the canonical GEMM that sm90's
  //    wgmma_tma strategy lowers with TMA tensor maps? (plan_schedule decides.)
  steps.analyze("match_async_gemm", kernel);
  kernel = steps.run("expand_tensor_access", std::move(kernel));
  kernel = steps.run("cse", std::move(kernel));
  //    Discovery: a max pass and a sum-of-exp pass over the same data become one online pass
  //    where the online softmax law verifies.
  kernel = steps.run("merge_online_reductions", std::move(kernel));
  kernel = steps.run("dce", std::move(kernel));
  //    A carried scalar that advances by a loop-invariant step (such as a rebased pointer
  //    offset) is computed from the induction variable, so a K loop carries only what it
  //    accumulates.
  kernel = steps.run("derive_induction_values", std::move(kernel));
  //    On mma.sync targets, a K loop's dot operands are loaded one iteration ahead, so their
  //    latency overlaps the previous step's matrix work.
  kernel = steps.run("prefetch_dot_operands", std::move(kernel));
  //    Device tiles: iterations whose tiles are provably complete leave their bounds checks
  //    behind in a guarded remainder loop.
  kernel = steps.run("peel_complete_iterations", std::move(kernel));
  //    Ownership (thread layouts): redundant conversions go, then the owner of every tile
  //    element of the final kernel is computed and checked; lowering reads that map.
  kernel = steps.run("eliminate_redundant_conversions", std::move(kernel));
  steps.analyze("check_ownership", kernel);
  //    Barriers must order the scalar and matrix fragment accesses of shared memory.
  steps.analyze("check_matrix_barriers", kernel);
  //    Device tiles own their scratch, and a buffer matrix operations access is read or
  //    written, not both.
  steps.analyze("check_device_tiles", kernel);

  // 3. Schedule: how many threads share a tile (the lane geometry), then the backend,
  //    SIMD-group geometry, staging, vector width and buffering, each with its reason; an
  //    explicit Schedule requirement the kernel or target cannot meet stops here.
  steps.analyze("plan_threads", kernel);
  steps.analyze("plan_schedule", kernel);
  //    The geometry must fit the target before lowering does work that grows with it.
  steps.analyze("check_resources", kernel);

  // 4. Lowering: tiles become per-thread register slots, reductions become SIMD and
  //    threadgroup collectives, threadgroup memory is allocated.
  ir::Kernel metal = steps.run("lower_to_metal", kernel);
  metal = steps.run("verify_scratch", std::move(metal));
  //    Software pipelines (double_buffer=True) must follow seed 004's dependency sequence.
  metal = steps.run("verify_software_pipeline", std::move(metal));
  //    An sm90 mbarrier ring must own, publish and release its stages in order.
  metal = steps.run("verify_async_pipeline", std::move(metal));

  // 5. Metal IR passes.
  metal = steps.run("canonicalize", std::move(metal));
  metal = steps.run("cse", std::move(metal));
  //    Four consecutive accesses of a thread become one guarded packed vector access.
  metal = steps.run("group_vector_accesses", std::move(metal));
  metal = steps.run("cse", std::move(metal));
  metal = steps.run("dce", std::move(metal));
  steps.analyze("verify_vector_accesses", metal);

  // 6. Emit the target's language (MSL or CUDA C++): a body function, an entry wrapper, and
  //    the ABI; or, on the PTX route (Schedule(route="ptx")), PTX the CUDA driver compiles.
  codegen::EmittedKernel emitted = steps.emit(emit_pass_for(target, options.schedule), metal);

  // 7. With METILE_REPLAY_DIR set, record the input and output for a replay diff.
  if (!replay.empty())
    write_replay_entry(replay, {kernel.name, target.name, std::string(math_mode_name(options.math)),
                                input_text, emitted.source, options.schedule});

  return steps.finish(std::move(kernel), std::move(metal), std::move(emitted));
}

}  // namespace metile
