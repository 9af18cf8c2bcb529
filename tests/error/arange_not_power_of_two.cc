// arange must produce a power-of-two tile.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, ArangeOfANonPowerOfTwoSize) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext&) {
    line = __LINE__ + 1;
    arange(0, 100);
  });
  test::expect_error(error,
                     "arange: the tile size end - start = 100 must be a positive power of two",
                     __FILE__, line);
}

}  // namespace metile::dsl
