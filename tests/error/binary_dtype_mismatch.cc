// Adding an f16 tile to an f32 tile: no implicit promotion between tiles.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, BinaryOpOnMismatchedDtypes) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto a = k.buffer("a", f16, "read");
    auto b = k.buffer("b", f32, "read");
    auto offs = arange(0, 32);
    auto va = load(a + offs);
    auto vb = load(b + offs);
    line = __LINE__ + 1;
    va + vb;
  });
  test::expect_error(error, "add: operand dtypes differ", __FILE__, line);
  test::expect_error(error, "cast one of them first", __FILE__, line);
}

}  // namespace metile::dsl
