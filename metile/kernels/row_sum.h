#pragma once

#include <cstdint>

#include "metile/ir/ir.h"

namespace metile::kernels {

// The sum of each row, one program per row: y[r] = sum(x[r, :n_cols]).
// Params: x (read, storage dtype), y (write, f32: one value per row), n_cols (i32),
// row_stride (i32); constexpr BLOCK; grid = n_rows. Accumulates in f32.
ir::Kernel row_sum(ir::DType dtype, int64_t block = 512);

}  // namespace metile::kernels
