// Thread layouts in the C++ eDSL: arange(start, end, layout) and convert_layout record the
// layout, keep the tile's type, and the traced transpose passes the ownership check.
#include <gtest/gtest.h>

#include "metile/dsl/dsl.h"
#include "metile/transform/check_ownership.h"

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

}  // namespace
}  // namespace metile
