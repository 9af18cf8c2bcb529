// Tile IR kernels built with TileBuilder for the lowering tests, and their plain C++
// references.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/ir/builder.h"

namespace metile::lower_test {

// out[i] = x[i] + y[i] for i < n; params (x, y, out, n); grid cdiv(n, block).
ir::Kernel vector_add(int64_t block);
// out[row] = sum of x[row * stride + c] for c < n_cols; params (x, out, n_cols, stride).
ir::Kernel row_sum(int64_t block);
// y = softmax(x) row by row, in three passes over tiles; params (x, y, n_cols, stride).
ir::Kernel softmax(int64_t block);
// y = x * rsqrt(mean(x^2) + eps) * w row by row, f32 accumulation; params (x, w, y, n_cols,
// stride, eps).
ir::Kernel rms_norm(int64_t block);
// out[row] = reduce_kind over x[row * stride + c] for c < n_cols (i32 or f32);
// params (x, out, n_cols, stride).
ir::Kernel row_reduce(const std::string& kind, ir::DType dtype, int64_t block);
// out[i * n + j] = (i + 1) * (j + 2) for an m x n tile built from expand_dims/broadcast of
// two aranges; params (out).
ir::Kernel outer_product(int64_t m, int64_t n);
// Copies a rows x cols f32 matrix through tensor descriptors in bm x bn tiles that run past
// the shape, shifted left by `shift` columns: out[r][c] = in[r][c - shift] (0 where
// c - shift < 0); params (in, out, rows, cols); grid cdiv(rows, bm).
ir::Kernel tensor_copy(int64_t bm, int64_t bn, int64_t shift);

std::vector<float> softmax_reference(const std::vector<float>& x, int rows, int cols);
std::vector<float> rms_norm_reference(const std::vector<float>& x, const std::vector<float>& w,
                                      int rows, int cols, float eps);

}  // namespace metile::lower_test
