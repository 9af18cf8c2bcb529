// Storing f32 values through an f16 pointer without a cast.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, StoreOfAValueWithTheWrongDtype) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto y = k.buffer("y", f16, "write");
    auto offs = arange(0, 128);
    line = __LINE__ + 1;
    store(y + offs, offs.to(f32));
  });
  test::expect_error(error, "store: the value %", __FILE__, line);
  test::expect_error(error, "does not match the pointee dtype f16; cast it first", __FILE__, line);
}

}  // namespace metile::dsl
