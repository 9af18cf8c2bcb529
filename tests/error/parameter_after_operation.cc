// Kernel parameters are declared before the body's first operation.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, ParameterDeclaredAfterAnOperation) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    program_id(0);
    line = __LINE__ + 1;
    k.scalar("n", i32);
  });
  test::expect_error(error,
                     "scalar 'n': kernel parameters must be declared before the first operation",
                     __FILE__, line);
}

}  // namespace metile::dsl
