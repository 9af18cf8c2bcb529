// Thread layouts in the C++ eDSL: arange(start, end, layout) and convert_layout record the
// layout, keep the tile's type, and the traced transpose passes the ownership check and
// transposes.
#include <gtest/gtest.h>

#include "metile/dsl/dsl.h"
#include "metile/lower/expand_tensor_access.h"
#include "metile/transform/check_ownership.h"
#include "tests/dsl/tile_interpreter.h"

namespace metile {
namespace {

using namespace metile::dsl;
using ir::OpKind;

const ThreadLayout kTranspose({3, 4, 5, 0, 1, 2});

// The seed's transpose8, written with the DSL.
ir::Kernel transpose8() {
  return trace("transpose8", [](KernelContext& k) {
    auto source = k.buffer("source", f32);
    auto destination = k.buffer("destination", f32);
    auto batches = k.scalar("batches", i32);
    auto inputs = tensor(source, {batches, 8, 8});
    auto outputs = tensor(destination, {batches, 8, 8});
    auto batch = program_id(0);
    auto positions = arange(0, 64);
    auto values = inputs.load({batch, floordiv(positions, 8), positions % 8});
    auto converted = convert_layout(values, kTranspose);
    auto owned = arange(0, 64, kTranspose);
    outputs.store({batch, owned % 8, floordiv(owned, 8)}, converted);
  });
}

const ir::Op& first(const ir::Kernel& k, OpKind kind, bool with_layout) {
  for (const ir::Op& op : k.body.ops)
    if (op.kind == kind && op.has_attr("layout") == with_layout) return op;
  throw std::runtime_error("no such op");
}

TEST(DslLayouts, TheTransposeRecordsItsLayouts) {
  const ir::Kernel k = transpose8();
  const ir::Op& conversion = first(k, OpKind::ConvertLayout, true);
  EXPECT_EQ(*conversion.layout_attr("layout"), kTranspose);
  EXPECT_EQ(k.type(conversion.results[0]), ir::Type::tile(ir::DType::f32, {64}));
  EXPECT_EQ(*first(k, OpKind::Arange, true).layout_attr("layout"), kTranspose);
  EXPECT_FALSE(first(k, OpKind::Arange, false).has_attr("layout"));
}

TEST(DslLayouts, TheTransposePassesTheOwnershipCheck) {
  const ir::Kernel k = transpose8();
  const ir::OwnershipMap owners = transform::check_ownership(k);
  ASSERT_TRUE(owners.has_explicit_layouts());
  EXPECT_EQ(owners.geometry()->thread_count, 64);
  const ir::Op& conversion = first(k, OpKind::ConvertLayout, true);
  EXPECT_EQ(*owners.layout(conversion.results[0]), kTranspose);
  EXPECT_EQ(*owners.layout(conversion.operands[0]), ThreadLayout::identity(64));
  // The store's tile coordinates and value share the transposed owner; the batch coordinate
  // is a uniform splat.
  const ir::Op& store = first(k, OpKind::TensorStore, false);
  EXPECT_EQ(owners.owner(store.operands[1]), ir::Owner::Uniform);
  for (size_t i = 2; i < store.operands.size(); ++i)
    EXPECT_EQ(*owners.layout(store.operands[i]), kTranspose) << i;
}

// convert_layout keeps every logical value, so the coordinates alone transpose: the Tile IR
// reference interpreter (which has no threads) gives each batch's transpose.
TEST(DslLayouts, TheTransposeTransposesEachBatch) {
  constexpr int64_t kBatches = 3;
  std::vector<test::HostBuffer> buffers = {{ir::DType::f32, {}},
                                           {ir::DType::f32, std::vector<double>(kBatches * 64, 0)}};
  for (int64_t i = 0; i < kBatches * 64; ++i) buffers[0].data.push_back(static_cast<double>(i));
  const ir::Kernel k = lower::expand_tensor_access(transpose8()).kernel;
  test::run_tile_ir(k, kBatches, {test::BufferArg{0}, test::BufferArg{1}, kBatches}, buffers);
  for (int64_t b = 0; b < kBatches; ++b)
    for (int64_t r = 0; r < 8; ++r)
      for (int64_t c = 0; c < 8; ++c)
        EXPECT_EQ(buffers[1].data[b * 64 + r * 8 + c], buffers[0].data[b * 64 + c * 8 + r])
            << b << " " << r << " " << c;
}

}  // namespace
}  // namespace metile
