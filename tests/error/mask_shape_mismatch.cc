// A load whose mask has another shape than its tile of pointers.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, MaskShapeDoesNotMatchPointerTile) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto x = k.buffer("x", f32, "read");
    line = __LINE__ + 1;
    load(x + arange(0, 64), arange(0, 32) < 16);
  });
  test::expect_error(error, "load: mask shape [32] does not match pointer shape [64]", __FILE__,
                     line);
}

}  // namespace metile::dsl
