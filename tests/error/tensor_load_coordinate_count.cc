// A rank-2 tensor loaded with one coordinate.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, TensorLoadWithTheWrongNumberOfCoordinates) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto a = k.buffer("a", f32, "read");
    auto t = tensor(a, {64, 64}, {64, 1}, "read");
    line = __LINE__ + 1;
    t.load({arange(0, 64)});
  });
  test::expect_error(error, "tensor.load: the tensor has rank 2 but 1 coordinates were given",
                     __FILE__, line);
}

}  // namespace metile::dsl
