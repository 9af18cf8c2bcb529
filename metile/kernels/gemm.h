#pragma once

#include <cstdint>

#include "metile/ir/ir.h"

namespace metile::kernels {

// GEMM (seed 002's matmul): output = left @ right, row-major, one program per BLOCK_M x
// BLOCK_N output tile (grid = (cdiv(rows, BLOCK_M), cdiv(columns, BLOCK_N))).
// Params: left (read, rows x inner), right (read, inner x columns), output (write, rows x
// columns), rows, columns, inner (i32); constexprs BLOCK_M, BLOCK_N, BLOCK_K. Inputs f16, bf16
// or f32; dot accumulates in f32, rounded once to `output`'s dtype on the store. Tensor
// descriptors bound every dimension, so any shape is exact.
ir::Kernel gemm(ir::DType input, ir::DType output, int64_t block_m = 64, int64_t block_n = 64,
                int64_t block_k = 16);

}  // namespace metile::kernels
