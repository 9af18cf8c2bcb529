// Parameter names are unique, wherever in the body each one is declared.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, ParameterDeclaredTwice) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    k.scalar("n", i32);
    program_id(0);
    line = __LINE__ + 1;
    k.buffer("n", f32, "read");
  });
  test::expect_error(error, "buffer 'n': a parameter of that name exists", __FILE__, line);
}

}  // namespace metile::dsl
