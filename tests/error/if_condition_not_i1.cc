// if_ on an integer instead of a comparison.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, IfConditionThatIsNotI1) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto n = k.scalar("n", i32);
    line = __LINE__ + 1;
    if_(n, [] {});
  });
  test::expect_error(error, "if: the condition must be an i1 scalar, got i32", __FILE__, line);
}

}  // namespace metile::dsl
