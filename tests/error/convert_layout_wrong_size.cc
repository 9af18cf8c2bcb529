// Converting a tile to a layout of another size.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, ConvertLayoutToALayoutOfAnotherSize) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext&) {
    auto tile = arange(0, 128);
    line = __LINE__ + 1;
    convert_layout(tile, ThreadLayout::identity(64));
  });
  test::expect_error(error,
                     "convert_layout: the layout identity(64 elements, 64 threads, 1 per thread) "
                     "owns 64 elements but %0: tile<128xi32> has 128",
                     __FILE__, line);
}

}  // namespace metile::dsl
