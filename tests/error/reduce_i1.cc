// Summing a mask directly: i1 tiles cannot be reduced.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, ReduceOfAnI1Tile) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto n = k.scalar("n", i32);
    auto mask = arange(0, 128) < n;
    line = __LINE__ + 1;
    sum(mask);
  });
  test::expect_error(error, "sum: cannot reduce i1 tiles; cast to an integer first", __FILE__,
                     line);
}

}  // namespace metile::dsl
