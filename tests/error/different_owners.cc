// Adding tiles of different owners without convert_layout.
#include "tests/error/error_test.h"

namespace metile::dsl {

TEST(Error, DifferentOwnersCombineOnlyThroughConvertLayout) {
  int line = 0;
  auto error = test::ownership_error([&](KernelContext&) {
    auto transposed = arange(0, 64, ThreadLayout({3, 4, 5, 0, 1, 2}));
    auto plain = arange(0, 64);
    line = __LINE__ + 1;
    [[maybe_unused]] auto sum = transposed + plain;
  });
  test::expect_error(error,
                     "add: %0 (tile<64xi32>) is owned by ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, "
                     "64 threads, 1 per thread) but %1 (tile<64xi32>) by the implicit layout "
                     "identity(64 elements, 64 threads, 1 per thread); values with different "
                     "owners combine only through convert_layout",
                     __FILE__, line);
}

}  // namespace metile::dsl
