#include "metile/kernels/softmax.h"

#include "metile/dsl/dsl.h"
#include "metile/kernels/storage_dtype.h"

namespace metile::kernels {

using namespace metile::dsl;

ir::Kernel softmax(ir::DType dtype, int64_t block) {
  check_storage_dtype("softmax", dtype);
  auto body = [dtype](KernelContext& k) {
    auto x = k.buffer("x", dtype, "read");
    auto y = k.buffer("y", dtype, "write");
    auto n_cols = k.scalar("n_cols", i32);
    auto row_stride = k.scalar("row_stride", i32);
    const int64_t BLOCK = k.constexpr_int("BLOCK");
    // Below any finite input; not -inf, so that exp(lowest - max) stays 0, never NaN.
    const float lowest = -1e38f;

    auto row_start = program_id(0) * row_stride;
    auto x_row = x + row_start;
    auto y_row = y + row_start;
    auto columns = [&](Value start) { return start + arange(0, BLOCK); };

    Value running_max =
        tile_range(0, n_cols, BLOCK, full({BLOCK}, lowest, f32), [&](Value start, Value& m) {
          auto cols = columns(start);
          auto in_row = cols < n_cols;
          auto v = load(x_row + cols, in_row).to(f32);
          m = maximum(m, where(in_row, v, lowest));
        });
    auto row_max = max(running_max);

    Value partial_sums =
        tile_range(0, n_cols, BLOCK, zeros({BLOCK}, f32), [&](Value start, Value& s) {
          auto cols = columns(start);
          auto in_row = cols < n_cols;
          auto v = load(x_row + cols, in_row).to(f32);
          s += where(in_row, exp(v - row_max), 0.0f);
        });
    auto inv_sum = 1.0f / sum(partial_sums);

    tile_range(0, n_cols, BLOCK, [&](Value start) {
      auto cols = columns(start);
      auto in_row = cols < n_cols;
      auto v = load(x_row + cols, in_row).to(f32);
      auto out = (exp(v - row_max) * inv_sum).to(dtype);
      store(y_row + cols, out, in_row);
    });
  };
  return trace(kernel_name("softmax", dtype), body, {{"BLOCK", block}});
}

}  // namespace metile::kernels
