#include "metile/kernels/row_sum.h"

#include "metile/dsl/dsl.h"
#include "metile/kernels/storage_dtype.h"

namespace metile::kernels {

using namespace metile::dsl;

ir::Kernel row_sum(ir::DType dtype, int64_t block) {
  check_storage_dtype("row_sum", dtype);
  auto body = [dtype](KernelContext& k) {
    auto x = k.buffer("x", dtype, "read");
    auto y = k.buffer("y", f32, "write");
    auto n_cols = k.scalar("n_cols", i32);
    auto row_stride = k.scalar("row_stride", i32);
    const int64_t BLOCK = k.constexpr_int("BLOCK");

    auto row = program_id(0);
    auto x_row = x + row * row_stride;
    Value partial = tile_range(0, n_cols, BLOCK, zeros({BLOCK}, f32), [&](Value start, Value& acc) {
      auto cols = start + arange(0, BLOCK);
      auto in_row = cols < n_cols;
      acc += load(x_row + cols, in_row).to(f32);
    });
    auto total = sum(partial);
    store(y + row, total);
  };
  return trace(kernel_name("row_sum", dtype), body, {{"BLOCK", block}});
}

}  // namespace metile::kernels
