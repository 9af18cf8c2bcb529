// The library kernels trace to the Tile IR their documentation promises.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "metile/kernels/kernels.h"
#include "tests/dsl/ir_query.h"

namespace metile {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

std::vector<std::string> param_names(const ir::Kernel& k) {
  std::vector<std::string> r;
  for (const ir::Param& p : k.params) r.push_back(p.name);
  return r;
}

std::vector<std::string> reduce_kinds(const ir::Kernel& k) {
  std::vector<std::string> r;
  for (const ir::Op* op : test::ops_of(k, OpKind::Reduce)) r.push_back(op->str_attr("kind"));
  return r;
}

class EveryStorageDtype : public ::testing::TestWithParam<DType> {};

TEST_P(EveryStorageDtype, VectorAdd) {
  ir::Kernel k = kernels::vector_add(GetParam(), 256);
  EXPECT_EQ(k.name, "vector_add_" + std::string(ir::dtype_name(GetParam())));
  EXPECT_EQ(param_names(k), (std::vector<std::string>{"x", "y", "out", "n"}));
  EXPECT_EQ(k.type(k.params[0].value), Type::ptr(GetParam()));
  EXPECT_EQ(std::get<int64_t>(k.attrs.at("BLOCK")), 256);
  EXPECT_EQ(test::ops_of(k, OpKind::Load).size(), 2u);
  EXPECT_EQ(test::ops_of(k, OpKind::Store).size(), 1u);
}

TEST_P(EveryStorageDtype, SoftmaxIsThreeMaskedLoopsInF32) {
  ir::Kernel k = kernels::softmax(GetParam(), 128);
  EXPECT_EQ(param_names(k), (std::vector<std::string>{"x", "y", "n_cols", "row_stride"}));
  auto loops = test::ops_of(k, OpKind::For);
  ASSERT_EQ(loops.size(), 3u);
  EXPECT_EQ(k.type(loops[0]->results[0]), Type::tile(DType::f32, {128}));
  EXPECT_EQ(k.type(loops[1]->results[0]), Type::tile(DType::f32, {128}));
  EXPECT_TRUE(loops[2]->results.empty());
  EXPECT_EQ(reduce_kinds(k), (std::vector<std::string>{"max", "sum"}));
  for (const ir::Op* load : test::ops_of(k, OpKind::Load)) EXPECT_EQ(load->operands.size(), 3u);
  const ir::Op& store = *test::ops_of(k, OpKind::Store)[0];
  EXPECT_EQ(store.operands.size(), 3u);
  EXPECT_EQ(k.type(store.operands[1]), Type::tile(GetParam(), {128}));
}

TEST_P(EveryStorageDtype, RmsNormAccumulatesInF32) {
  ir::Kernel k = kernels::rms_norm(GetParam(), 64);
  EXPECT_EQ(param_names(k),
            (std::vector<std::string>{"x", "w", "y", "n_cols", "row_stride", "eps"}));
  EXPECT_EQ(k.type(k.params[5].value), Type::scalar(DType::f32));
  auto loops = test::ops_of(k, OpKind::For);
  ASSERT_EQ(loops.size(), 2u);
  EXPECT_EQ(k.type(loops[0]->results[0]), Type::tile(DType::f32, {64}));
  EXPECT_EQ(reduce_kinds(k), (std::vector<std::string>{"sum"}));
  EXPECT_EQ(test::ops_of(k, OpKind::Rsqrt).size(), 1u);
}

TEST_P(EveryStorageDtype, RowSumStoresOneF32PerRow) {
  ir::Kernel k = kernels::row_sum(GetParam(), 32);
  EXPECT_EQ(param_names(k), (std::vector<std::string>{"x", "y", "n_cols", "row_stride"}));
  EXPECT_EQ(k.type(k.params[1].value), Type::ptr(DType::f32));
  EXPECT_EQ(test::ops_of(k, OpKind::For).size(), 1u);
  const ir::Op& store = *test::ops_of(k, OpKind::Store)[0];
  EXPECT_EQ(k.type(store.operands[1]), Type::scalar(DType::f32));
}

INSTANTIATE_TEST_SUITE_P(Kernels, EveryStorageDtype,
                         ::testing::Values(DType::f16, DType::bf16, DType::f32),
                         [](const auto& info) { return std::string(ir::dtype_name(info.param)); });

TEST(Kernels, RejectIntegerStorage) {
  EXPECT_THROW(kernels::softmax(DType::i32, 64), UserError);
}

}  // namespace
}  // namespace metile
