// prefetch_dot_operands (metile/transform) through lowering: the library GEMM with its operand
// loads issued one K step ahead computes the same product on the Metal IR interpreter, for
// ragged shapes, a K below one block and an empty K (the guarded prologue and next-step loads
// touch nothing past the loop).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "metile/ir/verifier.h"
#include "metile/kernels/gemm.h"
#include "metile/lower/expand_tensor_access.h"
#include "metile/transform/prefetch_dot_operands.h"
#include "tests/lower/lowering_harness.h"

namespace metile::lower_test {
namespace {

int count_loads_in_loops(const ir::Block& b, bool inside) {
  int n = 0;
  for (const ir::Op& op : b.ops) {
    n += inside && op.kind == ir::OpKind::Load;
    for (const ir::Block& region : op.regions)
      n += count_loads_in_loops(region, inside || op.kind == ir::OpKind::For);
  }
  return n;
}

TEST(PrefetchDotOperands, TheLibraryGemmLoadsAheadAndComputesTheSameProduct) {
  ir::Kernel expanded =
      lower::expand_tensor_access(kernels::gemm(ir::DType::f32, ir::DType::f32, 16, 16, 8)).kernel;
  // 16 x 16 f32 accumulators and two 16 x 8 tiles ahead over 64 threads: 4 + 2 * 4 registers.
  EXPECT_FALSE(transform::prefetch_dot_operands(expanded, 64, 11, false).result.changed);
  const transform::Prefetching done = transform::prefetch_dot_operands(expanded, 64, 12, false);
  const ir::PassResult& prefetched = done.result;
  ASSERT_TRUE(prefetched.changed);
  ASSERT_EQ(done.loops.size(), 1u);
  EXPECT_NE(done.loops[0].find("(2 loads)"), std::string::npos) << done.loops[0];
  ir::verify_or_throw(prefetched.kernel, "prefetch_dot_operands");
  // Two loads before the loop (its first step's tiles) and two in it (the next step's).
  int before = 0;
  for (const ir::Op& op : prefetched.kernel.body.ops) before += op.kind == ir::OpKind::Load;
  EXPECT_EQ(before, 2);
  EXPECT_EQ(count_loads_in_loops(prefetched.kernel.body, false), 2);
  // The generic dot (the interpreter holds no matrix fragments).
  lower::ThreadPlan plan{64, "the test's"};
  plan.dot_matrix_fragments = false;
  const ir::Kernel metal = lower_with_plan(prefetched.kernel, plan).metal;
  for (auto [rows, columns, inner] : {std::array<int, 3>{21, 18, 27}, {16, 16, 5}, {9, 7, 0}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(columns) + "x" +
                 std::to_string(inner));
    std::vector<float> a(size_t(rows) * inner), b(size_t(inner) * columns);
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 7) - 3) * 0.5f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 5) - 2) * 0.25f;
    std::vector<Buffer> buffers = {Buffer::f32(a), Buffer::f32(b),
                                   Buffer::f32(std::vector<float>(size_t(rows) * columns, -1.0f))};
    run_metal(metal, buffers,
              {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::scalar(rows), Arg::scalar(columns),
               Arg::scalar(inner)},
              {(rows + 15) / 16, (columns + 15) / 16, 1});
    const std::vector<float> out = buffers[2].floats();
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < columns; ++j) {
        float want = 0;
        for (int p = 0; p < inner; ++p)
          want += a[size_t(i) * inner + p] * b[size_t(p) * columns + j];
        ASSERT_EQ(out[size_t(i) * columns + j], want) << i << ", " << j;
      }
  }
}

}  // namespace
}  // namespace metile::lower_test
