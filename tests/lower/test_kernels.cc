#include "tests/lower/test_kernels.h"

#include <algorithm>
#include <cmath>

namespace metile::lower_test {

using ir::DType;
using ir::OpKind;
using ir::TileBuilder;
using ir::Type;
using ir::ValueId;

namespace {

ir::Kernel named(const std::string& name) {
  ir::Kernel k;
  k.name = name;
  return k;
}

// Loops over the columns of one row in tiles of `block`: body(cols, in_row, carried...).
template <typename Body>
std::vector<ValueId> over_columns(TileBuilder& b, ValueId n_cols, int64_t block,
                                  const std::vector<ValueId>& inits, Body&& body) {
  auto scope = b.begin_for(b.constant_int(0), n_cols, b.constant_int(block), inits);
  ValueId cols = b.binary(OpKind::Add, scope.induction_var, b.arange(0, block));
  ValueId in_row = b.cmp("lt", cols, n_cols);
  return b.end_for(body(cols, in_row, scope.carried));
}

}  // namespace

ir::Kernel vector_add(int64_t block) {
  ir::Kernel k = named("vector_add");
  TileBuilder b(k);
  ValueId x = b.add_param("x", Type::ptr(DType::f32), "read");
  ValueId y = b.add_param("y", Type::ptr(DType::f32), "read");
  ValueId out = b.add_param("out", Type::ptr(DType::f32), "write");
  ValueId n = b.add_param("n", Type::scalar(DType::i32));
  ValueId start = b.binary(OpKind::Mul, b.program_id(0), b.constant_int(block));
  ValueId offsets = b.binary(OpKind::Add, start, b.arange(0, block));
  ValueId mask = b.cmp("lt", offsets, n);
  ValueId sum = b.binary(OpKind::Add, b.load(b.ptr_add(x, offsets), mask),
                         b.load(b.ptr_add(y, offsets), mask));
  b.store(b.ptr_add(out, offsets), sum, mask);
  return k;
}

ir::Kernel row_reduce(const std::string& kind, DType dtype, int64_t block) {
  ir::Kernel k = named("row_" + kind);
  TileBuilder b(k);
  ValueId x = b.add_param("x", Type::ptr(dtype), "read");
  ValueId out = b.add_param("out", Type::ptr(dtype), "write");
  ValueId n_cols = b.add_param("n_cols", Type::scalar(DType::i32));
  ValueId stride = b.add_param("stride", Type::scalar(DType::i32));
  ValueId row = b.ptr_add(x, b.binary(OpKind::Mul, b.program_id(0), stride));
  const double init = kind == "sum" ? 0.0 : kind == "max" ? -1e9 : 1e9;
  ValueId acc = over_columns(
      b, n_cols, block, {b.full({block}, init, dtype)},
      [&](ValueId cols, ValueId in_row, const std::vector<ValueId>& carried) {
        ValueId v = b.load(b.ptr_add(row, cols), in_row, b.constant(init, dtype));
        OpKind combine = kind == "sum" ? OpKind::Add : kind == "max" ? OpKind::Max : OpKind::Min;
        return std::vector<ValueId>{b.binary(combine, carried[0], v)};
      })[0];
  b.store(b.ptr_add(out, b.program_id(0)), b.reduce(kind, acc));
  return k;
}

ir::Kernel row_sum(int64_t block) {
  return row_reduce("sum", DType::f32, block);
}

ir::Kernel softmax(int64_t block) {
  ir::Kernel k = named("softmax");
  TileBuilder b(k);
  ValueId x = b.add_param("x", Type::ptr(DType::f32), "read");
  ValueId y = b.add_param("y", Type::ptr(DType::f32), "write");
  ValueId n_cols = b.add_param("n_cols", Type::scalar(DType::i32));
  ValueId stride = b.add_param("stride", Type::scalar(DType::i32));
  ValueId row_start = b.binary(OpKind::Mul, b.program_id(0), stride);
  ValueId x_row = b.ptr_add(x, row_start), y_row = b.ptr_add(y, row_start);
  const double lowest = -1e38;
  ValueId running_max =
      over_columns(b, n_cols, block, {b.full({block}, lowest, DType::f32)},
                   [&](ValueId cols, ValueId in_row, const std::vector<ValueId>& m) {
                     ValueId v = b.load(b.ptr_add(x_row, cols), in_row);
                     ValueId masked = b.select(in_row, v, b.constant(lowest, DType::f32));
                     return std::vector<ValueId>{b.binary(OpKind::Max, m[0], masked)};
                   })[0];
  ValueId row_max = b.reduce("max", running_max);
  ValueId partial = over_columns(b, n_cols, block, {b.zeros({block}, DType::f32)},
                                 [&](ValueId cols, ValueId in_row, const std::vector<ValueId>& s) {
                                   ValueId v = b.load(b.ptr_add(x_row, cols), in_row);
                                   ValueId e =
                                       b.unary(OpKind::Exp, b.binary(OpKind::Sub, v, row_max));
                                   ValueId masked = b.select(in_row, e, b.constant(0, DType::f32));
                                   return std::vector<ValueId>{b.binary(OpKind::Add, s[0], masked)};
                                 })[0];
  ValueId inv_sum = b.binary(OpKind::Div, b.constant(1, DType::f32), b.reduce("sum", partial));
  over_columns(b, n_cols, block, {},
               [&](ValueId cols, ValueId in_row, const std::vector<ValueId>&) {
                 ValueId v = b.load(b.ptr_add(x_row, cols), in_row);
                 ValueId e = b.unary(OpKind::Exp, b.binary(OpKind::Sub, v, row_max));
                 b.store(b.ptr_add(y_row, cols), b.binary(OpKind::Mul, e, inv_sum), in_row);
                 return std::vector<ValueId>{};
               });
  return k;
}

ir::Kernel rms_norm(int64_t block) {
  ir::Kernel k = named("rms_norm");
  TileBuilder b(k);
  ValueId x = b.add_param("x", Type::ptr(DType::f32), "read");
  ValueId w = b.add_param("w", Type::ptr(DType::f32), "read");
  ValueId y = b.add_param("y", Type::ptr(DType::f32), "write");
  ValueId n_cols = b.add_param("n_cols", Type::scalar(DType::i32));
  ValueId stride = b.add_param("stride", Type::scalar(DType::i32));
  ValueId eps = b.add_param("eps", Type::scalar(DType::f32));
  ValueId row_start = b.binary(OpKind::Mul, b.program_id(0), stride);
  ValueId x_row = b.ptr_add(x, row_start), y_row = b.ptr_add(y, row_start);
  ValueId squares = over_columns(
      b, n_cols, block, {b.zeros({block}, DType::f32)},
      [&](ValueId cols, ValueId in_row, const std::vector<ValueId>& acc) {
        ValueId v = b.load(b.ptr_add(x_row, cols), in_row);
        return std::vector<ValueId>{b.binary(OpKind::Add, acc[0], b.binary(OpKind::Mul, v, v))};
      })[0];
  ValueId mean = b.binary(OpKind::Div, b.reduce("sum", squares), b.cast(n_cols, DType::f32));
  ValueId scale = b.unary(OpKind::Rsqrt, b.binary(OpKind::Add, mean, eps));
  over_columns(b, n_cols, block, {},
               [&](ValueId cols, ValueId in_row, const std::vector<ValueId>&) {
                 ValueId v = b.load(b.ptr_add(x_row, cols), in_row);
                 ValueId weight = b.load(b.ptr_add(w, cols), in_row);
                 ValueId r = b.binary(OpKind::Mul, b.binary(OpKind::Mul, v, scale), weight);
                 b.store(b.ptr_add(y_row, cols), r, in_row);
                 return std::vector<ValueId>{};
               });
  return k;
}

ir::Kernel outer_product(int64_t m, int64_t n) {
  ir::Kernel k = named("outer_product");
  TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  ValueId rows = b.expand_dims(b.arange(0, m), 1);  // [m, 1]
  ValueId cols = b.expand_dims(b.arange(0, n), 0);  // [1, n]
  ValueId a = b.binary(OpKind::Add, rows, b.constant_int(1));
  ValueId c = b.binary(OpKind::Add, cols, b.constant_int(2));
  ValueId product = b.binary(OpKind::Mul, a, c);  // broadcasts both to [m, n]
  ValueId index = b.binary(OpKind::Add, b.binary(OpKind::Mul, rows, b.constant_int(n)), cols);
  b.store(b.ptr_add(out, index), product);
  return k;
}

ir::Kernel tensor_copy(int64_t bm, int64_t bn, int64_t shift) {
  ir::Kernel k = named("tensor_copy");
  TileBuilder b(k);
  ValueId in = b.add_param("in", Type::ptr(DType::f32), "read");
  ValueId out = b.add_param("out", Type::ptr(DType::f32), "write");
  ValueId rows = b.add_param("rows", Type::scalar(DType::i32));
  ValueId cols = b.add_param("cols", Type::scalar(DType::i32));
  ValueId one = b.constant_int(1);
  ValueId src = b.make_tensor(in, {rows, cols}, {cols, one}, "read");
  ValueId dst = b.make_tensor(out, {rows, cols}, {cols, one}, "write");
  ValueId r = b.expand_dims(
      b.binary(OpKind::Add, b.binary(OpKind::Mul, b.program_id(0), b.constant_int(bm)),
               b.arange(0, bm)),
      1);
  ValueId c = b.expand_dims(b.arange(0, bn), 0);
  ValueId shifted = b.binary(OpKind::Sub, c, b.constant_int(shift));
  ValueId tile = b.tensor_load(src, {r, shifted});
  b.tensor_store(dst, {r, c}, tile);
  return k;
}

std::vector<float> softmax_reference(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    const float* row = x.data() + r * cols;
    double m = *std::max_element(row, row + cols), s = 0;
    for (int c = 0; c < cols; ++c) s += std::exp(row[c] - m);
    for (int c = 0; c < cols; ++c) y[r * cols + c] = static_cast<float>(std::exp(row[c] - m) / s);
  }
  return y;
}

std::vector<float> rms_norm_reference(const std::vector<float>& x, const std::vector<float>& w,
                                      int rows, int cols, float eps) {
  std::vector<float> y(x.size());
  for (int r = 0; r < rows; ++r) {
    double ss = 0;
    for (int c = 0; c < cols; ++c) ss += double(x[r * cols + c]) * x[r * cols + c];
    const double scale = 1.0 / std::sqrt(ss / cols + eps);
    for (int c = 0; c < cols; ++c)
      y[r * cols + c] = static_cast<float>(x[r * cols + c] * scale * w[c]);
  }
  return y;
}

}  // namespace metile::lower_test
