#include "metile/kernels/gemm.h"

#include "metile/dsl/dsl.h"
#include "metile/kernels/storage_dtype.h"

namespace metile::kernels {

using namespace metile::dsl;

ir::Kernel gemm(ir::DType input, ir::DType output, int64_t block_m, int64_t block_n,
                int64_t block_k) {
  check_storage_dtype("gemm", input);
  check_storage_dtype("gemm", output);
  auto body = [input, output](KernelContext& k) {
    auto left = k.buffer("left", input, "read");
    auto right = k.buffer("right", input, "read");
    auto out = k.buffer("output", output, "write");
    auto rows = k.scalar("rows", i32);
    auto columns = k.scalar("columns", i32);
    auto inner = k.scalar("inner", i32);
    const int64_t BLOCK_M = k.constexpr_int("BLOCK_M");
    const int64_t BLOCK_N = k.constexpr_int("BLOCK_N");
    const int64_t BLOCK_K = k.constexpr_int("BLOCK_K");

    auto a = tensor(left, {rows, inner}, {}, "read");
    auto b = tensor(right, {inner, columns}, {}, "read");
    auto c = tensor(out, {rows, columns}, {}, "write");
    auto row = program_id(0) * BLOCK_M + arange(0, BLOCK_M);
    auto column = program_id(1) * BLOCK_N + arange(0, BLOCK_N);
    Value acc =
        tile_range(0, inner, BLOCK_K, zeros({BLOCK_M, BLOCK_N}, f32), [&](Value start, Value& sum) {
          auto ks = start + arange(0, BLOCK_K);
          sum = dot(a.load({row.col(), ks.row()}), b.load({ks.col(), column.row()}), sum);
        });
    c.store({row.col(), column.row()}, acc.to(output));
  };
  const std::string name = kernel_name("gemm", input) +
                           (output == input ? "" : "_to_" + std::string(ir::dtype_name(output)));
  return trace(name, body, {{"BLOCK_M", block_m}, {"BLOCK_N", block_n}, {"BLOCK_K", block_k}});
}

}  // namespace metile::kernels
