// The wgmma_tma strategy of sm90's tensor_ops backend (docs/hopper.md): a canonical descriptor
// GEMM (lower_dot_wgmma_match.cc) lowered whole to a warp-specialised, persistent kernel of
// TMA loads into an mbarrier ring and wgmma_mma, with its pointwise epilogue applied to the
// accumulator registers.
#pragma once

#include "metile/ir/ir.h"
#include "metile/lower/plan_threads.h"
#include "metile/schedule/async_gemm.h"

namespace metile::lower {

class Lowering;

// What `tile` (Tile IR before expand_tensor_access) is, or why it is not the canonical GEMM.
schedule::AsyncGemm match_async_gemm(const ir::Kernel& tile);

// The consumer warp groups' thread plan: 128 threads each, and the accumulator tile's
// layout (wgmma's register fragments, so the epilogue runs on the registers in place).
ThreadPlan wgmma_thread_plan(const schedule::AsyncGemm& gemm);
// The threads per threadgroup: the consumer warp groups and one producer warp group.
int64_t wgmma_block_threads(const schedule::AsyncGemm& gemm);

// Lowers the whole kernel (Lowering built on wgmma_thread_plan's plan).
void lower_wgmma_kernel(Lowering& l);

}  // namespace metile::lower
