// Two tiles whose shapes do not broadcast (numpy rules).
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, TilesThatDoNotBroadcast) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext&) {
    auto a = arange(0, 32);
    auto b = arange(0, 64);
    line = __LINE__ + 1;
    a* b;
  });
  test::expect_error(error, "mul: shapes [32] and [64] do not broadcast", __FILE__, line);
}

}  // namespace metile::dsl
