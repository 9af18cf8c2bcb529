// A kernel asks for a constexpr that trace() was not given.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, MissingConstexpr) {
  int line = 0;
  auto error = test::trace_error(
      [&](KernelContext& k) {
        line = __LINE__ + 1;
        k.constexpr_int("BLOCK");
      },
      {{"ROWS", 4}});
  test::expect_error(error, "constexpr 'BLOCK': no value given; pass it to trace() (given: ROWS)",
                     __FILE__, line);
}

}  // namespace metile::dsl
