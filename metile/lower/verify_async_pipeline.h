// A check of Metal IR: the asynchronous pipeline's contract (docs/hopper.md), the
// N-stage analogue of seed 004's two-stage SoftwarePipeline validation. A ring is a
// threadgroup buffer of tiles written by tma_load; its mbarriers are an i64 threadgroup buffer
// of 2S: full[X] = bars + X, empty[X] = bars + (X + S), for a stage X = rem(i, S) of a step i.
// In every block (a loop body or a branch), in order:
//   slot ownership   a tma_load into stage X follows an mbarrier_wait on empty[X] and an
//                    mbarrier_arrive_expect_tx on full[X], and completes on full[X];
//   publication      a wgmma_mma reading stage X follows an mbarrier_wait on full[X];
//   phase parity     a wait on full[rem(i, S)] has parity and(div(i, S), 1); one on empty[...]
//                    its complement xor(and(div(i, S), 1), 1), since the producer's first pass
//                    finds every slot free;
//   release          a block that waits on full[X] also arrives on an empty barrier of the
//                    ring (directly or in a branch), so the producer can reuse the slot.
// Kernels without mbarriers pass unchanged. A violation is an InternalError naming the op and
// the rule: the lowering built a broken pipeline.
#pragma once

#include "metile/ir/ir.h"

namespace metile::lower {

void verify_async_pipeline(const ir::Kernel& metal);

}  // namespace metile::lower
