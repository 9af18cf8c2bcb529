// A carried value that starts as a scalar and is combined with a tile in the body.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, LoopCarriedValueThatChangesType) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto x = k.buffer("x", f32, "read");
    auto n = k.scalar("n", i32);
    auto m0 = k.scalar("m0", f32);
    line = __LINE__ + 1;
    tile_range(0, n, 64, m0,
               [&](Value start, Value& m) { m = maximum(m, load(x + start + arange(0, 64))); });
  });
  test::expect_error(error,
                     "tile_range: loop-carried value 0 changes type from f32 to tile<64xf32> in "
                     "the loop body",
                     __FILE__, line);
  test::expect_error(error, "full(shape, value, dtype)", __FILE__, line);
}

}  // namespace metile::dsl
