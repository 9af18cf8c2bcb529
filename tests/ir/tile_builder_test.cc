// TileBuilder reads operand types while it creates ops; creating an op may reallocate the
// kernel's type list. Each test fills that list to capacity first, so the next op created
// moves it: a type read through a stale reference is a use-after-free (caught by
// scripts/sanitize.sh) and, once the freed memory is reused, a wrong result.
#include <gtest/gtest.h>

#include "metile/ir/builder.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"

namespace metile::ir {
namespace {

struct Full {
  Kernel k;
  TileBuilder b{k};
  ValueId base, coord;
  Full() {
    k.name = "k";
    base = b.add_param("t", Type::ptr(DType::f16), "read_write");
    coord = b.add_param("i", Type::scalar(DType::i64));
  }
  void fill_to_capacity() { k.types.shrink_to_fit(); }
};

TEST(TileBuilder, MakeTensorKeepsTheBaseDtypeWhileCastingDims) {
  Full f;
  f.fill_to_capacity();
  ValueId desc = f.b.make_tensor(f.base, {f.coord}, {f.coord}, "read_write");
  EXPECT_EQ(f.k.type(desc), Type::desc(DType::f16, 1));
}

TEST(TileBuilder, TensorLoadAndStoreKeepTheDescriptorTypeWhileCastingCoords) {
  Full f;
  ValueId desc = f.b.make_tensor(f.base, {f.coord}, {f.coord}, "read_write");
  f.fill_to_capacity();
  ValueId v = f.b.tensor_load(desc, {f.coord});
  EXPECT_EQ(f.k.type(v), Type::scalar(DType::f16));
  f.fill_to_capacity();
  f.b.tensor_store(desc, {f.coord}, v);
  EXPECT_TRUE(verify(f.k).empty()) << print(f.k);
}

}  // namespace
}  // namespace metile::ir
