// A store into a buffer declared read (declare it read_write, or leave the access out).
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, StoreIntoABufferDeclaredRead) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto x = k.buffer("x", f32, "read");
    auto v = load(x + arange(0, 64));
    line = __LINE__ + 1;
    store(x + arange(0, 64), v * 2.0f);
  });
  test::expect_error(error, "store: buffer 'x' is declared read but the kernel writes it", __FILE__,
                     line);
}

}  // namespace metile::dsl
