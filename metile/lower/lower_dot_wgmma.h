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

// The [block_m, block_n] f32 accumulator of `groups` warp groups in wgmma's register fragments:
// each group owns block_m / groups rows as m64 blocks of block_n / 2 registers each, thread t of
// a group holding d[i] of each block at row 16 * (t / 32) + (t % 32) / 4 + 8 * (i / 2 % 2) and
// column 8 * (i / 4) + 2 * (t % 4) + i % 2 (PTX ISA, "wgmma .m64nNk16 register fragments").
ir::ThreadLayout wgmma_accumulator_layout(int64_t block_m, int64_t block_n, int64_t groups);

// Lowers the whole kernel (Lowering built on wgmma_thread_plan's plan).
void lower_wgmma_kernel(Lowering& l);

}  // namespace metile::lower
