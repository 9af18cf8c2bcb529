// A value computed in a loop body used after the loop (it must be carried out instead).
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, ValueUsedOutsideTheLoopThatDefinedIt) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto y = k.buffer("y", i32, "write");
    Value last;
    tile_range(0, 8, 1, [&](Value i) { last = i; });
    line = __LINE__ + 1;
    store(y, last);
  });
  test::expect_error(error, "was defined inside a tile_range body and cannot be used outside it",
                     __FILE__, line);
}

}  // namespace metile::dsl
