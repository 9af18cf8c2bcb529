// A fractional C++ number next to an integer tile cannot adopt its dtype.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, FractionalNumberWithAnIntegerTile) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext&) {
    auto i = arange(0, 8);
    line = __LINE__ + 1;
    i + 0.25;
  });
  test::expect_error(error,
                     "add: the C++ number 0.250000 is not an integer but the other operand is i32",
                     __FILE__, line);
}

}  // namespace metile::dsl
