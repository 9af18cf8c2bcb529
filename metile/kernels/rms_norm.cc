#include "metile/kernels/rms_norm.h"

#include "metile/dsl/dsl.h"
#include "metile/kernels/storage_dtype.h"

namespace metile::kernels {

using namespace metile::dsl;

ir::Kernel rms_norm(ir::DType dtype, int64_t block) {
  check_storage_dtype("rms_norm", dtype);
  auto body = [dtype](KernelContext& k) {
    auto x = k.buffer("x", dtype, "read");
    auto w = k.buffer("w", dtype, "read");
    auto y = k.buffer("y", dtype, "write");
    auto n_cols = k.scalar("n_cols", i32);
    auto row_stride = k.scalar("row_stride", i32);
    auto eps = k.scalar("eps", f32);
    const int64_t BLOCK = k.constexpr_int("BLOCK");

    auto row_start = program_id(0) * row_stride;
    auto x_row = x + row_start;
    auto y_row = y + row_start;

    // Masked lanes load 0 and add nothing to the sum of squares.
    Value squares = tile_range(0, n_cols, BLOCK, zeros({BLOCK}, f32), [&](Value start, Value& acc) {
      auto cols = start + arange(0, BLOCK);
      auto in_row = cols < n_cols;
      auto v = load(x_row + cols, in_row).to(f32);
      acc += v * v;
    });
    auto n = n_cols.to(f32);
    auto mean_square = sum(squares) / n;
    auto scale = rsqrt(mean_square + eps);

    tile_range(0, n_cols, BLOCK, [&](Value start) {
      auto cols = start + arange(0, BLOCK);
      auto in_row = cols < n_cols;
      auto v = load(x_row + cols, in_row).to(f32);
      auto weight = load(w + cols, in_row).to(f32);
      auto out = (v * scale * weight).to(dtype);
      store(y_row + cols, out, in_row);
    });
  };
  return trace(kernel_name("rms_norm", dtype), body, {{"BLOCK", block}});
}

}  // namespace metile::kernels
