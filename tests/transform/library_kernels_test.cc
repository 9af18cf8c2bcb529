// The library kernels (metile/kernels) are valid Tile IR, round-trip through the text form,
// and stay valid under canonicalize, cse and dce, which reach a fixpoint in one round.
#include <gtest/gtest.h>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/kernels/kernels.h"
#include "metile/transform/canonicalize.h"
#include "metile/transform/cse.h"
#include "metile/transform/dce.h"

namespace metile::transform {
namespace {

std::vector<ir::Kernel> library() {
  return kernels::library({ir::DType::f32, ir::DType::f16});
}

ir::Kernel simplify(ir::Kernel k) {
  return eliminate_dead_code(
             eliminate_common_subexpressions(canonicalize(std::move(k)).kernel).kernel)
      .kernel;
}

TEST(LibraryKernels, VerifyRoundTripAndSimplify) {
  for (const ir::Kernel& k : library()) {
    SCOPED_TRACE(k.name);
    EXPECT_TRUE(ir::verify(k).empty()) << ir::verify(k).front().str();
    const std::string text = ir::print(k);
    EXPECT_EQ(ir::print(ir::parse(text)), text);
    ir::Kernel once = simplify(k);
    EXPECT_NO_THROW(ir::verify_or_throw(once, "canonicalize+cse+dce"));
    EXPECT_EQ(ir::print(simplify(once)), ir::print(once));
  }
}

}  // namespace
}  // namespace metile::transform
