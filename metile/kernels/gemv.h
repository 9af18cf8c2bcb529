#pragma once

#include <cstdint>

#include "metile/ir/ir.h"

namespace metile::kernels {

// Decode GEMV (python/metile_kernels/decode_gemm.py's gemv, one row a program; docs/
// decode_gemm.md): slice program_id(2) of output = x[row] @ weight over K rows [split * chunk,
// split * chunk + chunk), grid = (rows, cdiv(columns, BLOCK_N), splits).
// Params: x (read, rows x inner), weight (read, inner x columns), output (write, splits x rows
// x columns), rows, columns, inner, chunk (i32, a multiple of UNROLL); constexprs BLOCK_N,
// UNROLL. Every tile is 1-D, so each thread owns runs of adjacent columns, read from a weight
// row as one 16-byte vector; a step reads UNROLL rows with independent loads. Past K the loads
// read row K - 1 and its activation counts as 0 (no load waits behind a K-dependent branch).
// With one split `output` is the product in its dtype; with several, f32 partial slices that
// split_sum adds. Inputs f16, bf16 or f32; products and sums in f32.
ir::Kernel gemv(ir::DType input, ir::DType output, int64_t block_n = 512, int64_t unroll = 8);

// The sum of `splits` f32 slices (splits x rows x columns, 16 at a time across the threads: a
// fixed order) rounded once to `output`'s dtype: gemv's second pass. Params: slices (read),
// output (write, rows x columns), rows, columns, splits (i32); constexpr BLOCK; grid = (rows,
// cdiv(columns, BLOCK)).
ir::Kernel split_sum(ir::DType output, int64_t block = 256);

}  // namespace metile::kernels
