#pragma once

#include <cstdint>

#include "metile/ir/ir.h"

namespace metile::kernels {

// out[i] = x[i] + y[i] for i < n. Params: x (read), y (read), out (write), n (i32);
// constexpr BLOCK elements per program; grid = cdiv(n, BLOCK). dtype: f16, bf16 or f32.
ir::Kernel vector_add(ir::DType dtype, int64_t block = 1024);

}  // namespace metile::kernels
