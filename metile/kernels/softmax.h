#pragma once

#include <cstdint>

#include "metile/ir/ir.h"

namespace metile::kernels {

// Row softmax, one program per row: y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)).
// Params: x (read), y (write), n_cols (i32), row_stride (i32, elements between rows of x
// and of y); constexpr BLOCK columns per tile; grid = n_rows. Storage f16, bf16 or f32;
// compute in f32. Three passes over the row, each a loop of BLOCK-wide masked tiles.
ir::Kernel softmax(ir::DType dtype, int64_t block = 512);

}  // namespace metile::kernels
