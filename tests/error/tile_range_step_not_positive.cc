// A loop by zero or a negative step never reaches its end: a number step must be positive.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, TileRangeStepZeroOrNegative) {
  for (int step : {0, -1}) {
    int line = 0;
    auto error = test::trace_error([&](KernelContext& k) {
      auto n = k.scalar("n", i32);
      line = __LINE__ + 1;
      tile_range(0, n, step, [&](Value) {});
    });
    test::expect_error(error, "tile_range: the step must be positive, got " + std::to_string(step),
                       __FILE__, line);
  }
}

}  // namespace metile::dsl
