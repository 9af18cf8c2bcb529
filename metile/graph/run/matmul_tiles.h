// How a matmul region's kernel is tiled on a target, and why (the kernel's decision text).
//
// On a target with wgmma (sm90), a prefill region (M above 64) whose matmuls multiply 16-bit
// operands of one dtype takes the tiles the hand-written kernels reach wgmma with: 128 rows a
// program on 8 warps (two warp groups, a 64-row block each), K in steps of 64 (one 128-byte
// swizzled row of 16-bit elements) and a block N of 256 (one matmul a K loop: its
// accumulator is 128 registers a thread, Triton's 128x256x64) or 128 (several: their
// accumulators share those 128 registers). Elsewhere (decode, f32, targets without wgmma)
// the mma.sync / simdgroup tiles: 16 to 64 rows by 64, K in steps of 32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/graph/graph_ir.h"
#include "metile/target/target.h"

namespace metile::graph {

struct MatmulTiles {
  int64_t block_m = 0, block_n = 0, block_k = 0;
  int64_t threads = 0;  // threads per threadgroup the kernel asks for; 0: the thread planner's
  bool wgmma = false;   // tiles chosen for wgmma
  std::string decision;
};

// `ops`: the kernel's matmuls and epilogue (one output shape `out`); `spill`: the
// scratch-spilled schedule (one matmul a K loop).
MatmulTiles choose_matmul_tiles(const Graph& graph, const std::vector<int>& ops, const Shape& out,
                                bool spill, const target::Target& target);

}  // namespace metile::graph
