#pragma once

#include <cstdint>

#include "metile/ir/ir.h"

namespace metile::kernels {

// RMS normalisation, one program per row: y = x * rsqrt(mean(x^2) + eps) * w.
// Params: x (read), w (read, n_cols weights), y (write), n_cols (i32), row_stride (i32,
// for x and y), eps (f32); constexpr BLOCK; grid = n_rows. Storage f16, bf16 or f32;
// accumulation in f32. Two passes: sum of squares, then scale and store.
ir::Kernel rms_norm(ir::DType dtype, int64_t block = 512);

}  // namespace metile::kernels
