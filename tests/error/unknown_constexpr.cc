// trace() is given a constexpr the kernel never asks for (a misspelling).
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, UnknownConstexpr) {
  auto kernel = [](KernelContext& k) { k.constexpr_int("BLOCK"); };
  int line = 0;
  try {
    line = __LINE__ + 1;
    trace("misspelt", kernel, {{"BLOCK", 64}, {"BLOCK_SIZE", 64}});
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    test::expect_error(e, "trace('misspelt'): constexpr 'BLOCK_SIZE' is not used by the kernel",
                       __FILE__, line);
  }
}

}  // namespace metile::dsl
