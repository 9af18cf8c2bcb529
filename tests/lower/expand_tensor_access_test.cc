#include "metile/lower/expand_tensor_access.h"

#include <gtest/gtest.h>

#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

using ir::OpKind;

int count_tile_ops(const ir::Kernel& k, OpKind kind) {
  return count_ops(k, kind);
}

TEST(ExpandTensorAccess, DescriptorsBecomeMaskedPointerAccesses) {
  ir::PassResult result = lower::expand_tensor_access(tensor_copy(16, 32, 0));
  EXPECT_TRUE(result.changed);
  const ir::Kernel& expanded = result.kernel;
  EXPECT_EQ(count_tile_ops(expanded, OpKind::MakeTensor), 0);
  EXPECT_EQ(count_tile_ops(expanded, OpKind::TensorLoad), 0);
  EXPECT_EQ(count_tile_ops(expanded, OpKind::TensorStore), 0);
  int masked_loads = 0, masked_stores = 0;
  ir::walk(expanded.body, [&](const ir::Op& op) {
    masked_loads += op.kind == OpKind::Load && op.operands.size() == 3;
    masked_stores += op.kind == OpKind::Store && op.operands.size() == 3;
  });
  EXPECT_EQ(masked_loads, 1);
  EXPECT_EQ(masked_stores, 1);
}

TEST(ExpandTensorAccess, KernelsWithoutDescriptorsAreUnchanged) {
  ir::Kernel k = vector_add(128);
  const size_t values = k.types.size();
  ir::PassResult result = lower::expand_tensor_access(k);
  EXPECT_FALSE(result.changed);
  const ir::Kernel& same = result.kernel;
  EXPECT_EQ(same.types.size(), values);
  EXPECT_EQ(same.body.ops.size(), k.body.ops.size());
}

// Tiles that run past the tensor's shape in both dimensions, and past column 0 on the left:
// the interpreter's bounds check fails on any unmasked access, and the output buffer is
// exactly rows x cols.
TEST(ExpandTensorAccess, LoadsAndStoresPastTheShapeAreMasked) {
  for (int64_t shift : {int64_t{0}, int64_t{3}}) {
    const ir::Kernel metal = lower_checked(tensor_copy(16, 32, shift)).metal;
    for (auto [rows, cols] : std::vector<std::pair<int, int>>{{5, 7}, {16, 32}, {37, 20}, {1, 1}}) {
      std::vector<float> in(rows * cols);
      for (int i = 0; i < rows * cols; ++i) in[i] = 1.0f + i;
      std::vector<Buffer> buffers = {Buffer::f32(in),
                                     Buffer::f32(std::vector<float>(rows * cols, -1))};
      run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(rows), Arg::scalar(cols)},
                {(rows + 15) / 16, 1, 1});
      std::vector<float> out = buffers[1].floats();
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) {
          const float want = c - shift >= 0 ? in[r * cols + c - shift] : 0.0f;
          ASSERT_EQ(out[r * cols + c], want) << rows << "x" << cols << " at " << r << ", " << c;
        }
    }
  }
}

TEST(ExpandTensorAccess, ScalarCoordinates) {
  ir::Kernel k;
  k.name = "scalar_tensor";
  ir::TileBuilder b(k);
  ir::ValueId in = b.add_param("in", ir::Type::ptr(ir::DType::f32), "read");
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::f32), "write");
  ir::ValueId n = b.add_param("n", ir::Type::scalar(ir::DType::i32));
  ir::ValueId src = b.make_tensor(in, {n}, {b.constant_int(1)}, "read");
  ir::ValueId dst = b.make_tensor(out, {n}, {b.constant_int(1)}, "write");
  ir::ValueId i = b.program_id(0);
  b.tensor_store(dst, {i},
                 b.binary(OpKind::Mul, b.tensor_load(src, {i}), b.constant(2, ir::DType::f32)));
  const ir::Kernel metal = lower_checked(k).metal;
  std::vector<Buffer> buffers = {Buffer::f32({1, 2, 3}), Buffer::zeros(ir::DType::f32, 3)};
  // Five programs for three elements: programs 3 and 4 are out of bounds and masked.
  run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(3)}, {5, 1, 1});
  EXPECT_EQ(buffers[1].floats(), (std::vector<float>{2, 4, 6}));
}

}  // namespace
}  // namespace metile::lower_test
