// exp of an i32 tile: math needs floating point.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, MathOnAnIntegerTile) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext&) {
    auto i = arange(0, 16);
    line = __LINE__ + 1;
    exp(i);
  });
  test::expect_error(error, "exp: needs a floating-point operand", __FILE__, line);
  test::expect_error(error, "tile<16xi32>; cast it first", __FILE__, line);
}

}  // namespace metile::dsl
