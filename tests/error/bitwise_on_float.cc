// Bitwise operators need integers or i1.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, BitwiseOpOnFloats) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext&) {
    auto x = zeros({16}, f32);
    line = __LINE__ + 1;
    x& x;
  });
  test::expect_error(error, "and: bitwise operations need integer or i1 operands", __FILE__, line);
}

}  // namespace metile::dsl
