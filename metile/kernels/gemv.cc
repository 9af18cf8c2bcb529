#include "metile/kernels/gemv.h"

#include "metile/dsl/dsl.h"
#include "metile/kernels/storage_dtype.h"

namespace metile::kernels {

using namespace metile::dsl;

constexpr int64_t kSplitStep = 16;  // slices split_sum reads at once

ir::Kernel gemv(ir::DType input, ir::DType output, int64_t block_n, int64_t unroll) {
  check_storage_dtype("gemv", input);
  check_storage_dtype("gemv", output);
  auto body = [input, output](KernelContext& k) {
    auto x = k.buffer("x", input, "read");
    auto weight = k.buffer("weight", input, "read");
    auto out = k.buffer("output", output, "write");
    auto rows = k.scalar("rows", i32);
    auto columns = k.scalar("columns", i32);
    auto inner = k.scalar("inner", i32);
    auto chunk = k.scalar("chunk", i32);
    const int64_t BLOCK_N = k.constexpr_int("BLOCK_N");
    const int64_t UNROLL = k.constexpr_int("UNROLL");

    auto row = program_id(0);
    auto lanes = arange(0, BLOCK_N);
    auto column = program_id(1) * BLOCK_N + lanes;
    auto inside = column < columns;
    auto split = program_id(2);
    auto first = split * chunk;
    auto last = first + chunk;
    auto x_row = x + row * inner;
    Value acc = tile_range(first, last, UNROLL, zeros({BLOCK_N}, f32), [&](Value k0, Value& sum) {
      for (int64_t j = 0; j < UNROLL; ++j) {
        auto at = k0 + j;
        auto clamped = minimum(at, inner - 1);
        auto live = at < inner;
        auto activation = load(x_row + clamped).to(f32);
        auto scale = where(live, activation, 0.0f);
        auto row_start = weight + clamped * columns;
        auto w = load(row_start + column, inside).to(f32);
        sum += w * scale;
      }
    });
    auto slices = tensor(out, {num_programs(2), rows, columns}, {}, "write");
    slices.store({split, row, column}, acc.to(output));
  };
  const std::string name = kernel_name("gemv", input) +
                           (output == input ? "" : "_to_" + std::string(ir::dtype_name(output)));
  return trace(name, body, {{"BLOCK_N", block_n}, {"UNROLL", unroll}});
}

ir::Kernel split_sum(ir::DType output, int64_t block) {
  check_storage_dtype("split_sum", output);
  auto body = [output](KernelContext& k) {
    auto slices = k.buffer("slices", f32, "read");
    auto out = k.buffer("output", output, "write");
    auto rows = k.scalar("rows", i32);
    auto columns = k.scalar("columns", i32);
    auto splits = k.scalar("splits", i32);
    const int64_t BLOCK = k.constexpr_int("BLOCK");

    auto row = program_id(0);
    auto column = program_id(1) * BLOCK + arange(0, BLOCK);
    auto columns_of_step = column.row();
    auto steps = arange(0, kSplitStep);
    auto partial = tensor(slices, {splits, rows, columns}, {}, "read");
    // kSplitStep slices a step, summed across threads once at the end: a step's loads are in
    // flight together, where one slice a step would wait for each in turn.
    Value sums = tile_range(0, splits, kSplitStep, zeros({kSplitStep, BLOCK}, f32),
                            [&](Value first, Value& sum) {
                              auto split = first + steps;
                              auto split_of_step = split.col();
                              sum += partial.load({split_of_step, row, columns_of_step});
                            });
    auto total = sum_axis(sums, 0);
    auto c = tensor(out, {rows, columns}, {}, "write");
    c.store({row, column}, total.to(output));
  };
  return trace(kernel_name("split_sum", output), body, {{"BLOCK", block}});
}

}  // namespace metile::kernels
