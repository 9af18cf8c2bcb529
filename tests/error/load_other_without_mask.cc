// 'other' replaces masked-off elements, so it needs a mask.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, LoadOtherWithoutMask) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto x = k.buffer("x", f32, "read");
    line = __LINE__ + 1;
    load(x + arange(0, 32), {}, 1.0f);
  });
  test::expect_error(error, "load: 'other' is only meaningful with a mask", __FILE__, line);
}

}  // namespace metile::dsl
