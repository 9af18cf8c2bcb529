// The branches of an if_ yield values of different types.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, IfBranchesYieldDifferentTypes) {
  int line = 0;
  auto error = test::trace_error([&](KernelContext& k) {
    auto n = k.scalar("n", i32);
    line = __LINE__ + 1;
    if_(
        n > 0, [&] { return zeros({8}, f32); }, [&] { return zeros({8}, f16); });
  });
  test::expect_error(error,
                     "if: result 0 is tile<8xf32> in the then-branch but tile<8xf16> in the "
                     "else-branch",
                     __FILE__, line);
}

}  // namespace metile::dsl
