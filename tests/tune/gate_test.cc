// The numerical gate: scale normalisation, the per-dtype tolerances at their boundary, and
// the NaN/infinity rules.
#include "metile/tune/gate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "metile/support/errors.h"

namespace metile::tune {
namespace {

GateResult gate(const std::vector<double>& native, const std::vector<double>& candidate,
                const char* dtype = "f32") {
  return gate_output(native, candidate, dtype);
}

TEST(Gate, TheErrorIsNormalisedByTheLargestNativeValue) {
  const GateResult r = gate({1000.0, -2000.0, 0.5}, {1000.0, -2000.0, 0.51});
  EXPECT_TRUE(r.passed);
  EXPECT_NEAR(r.error, 0.01 / 2000.0, 1e-15);
  EXPECT_FALSE(gate({1.0, 2.0}, {1.0, 2.001}).passed);
}

TEST(Gate, AnErrorAtTheToleranceItselfPassesAndAboveItFails) {
  EXPECT_DOUBLE_EQ(gate_tolerance("f16"), 4e-3);
  EXPECT_TRUE(gate({1000.0}, {1004.0}, "f16").passed);  // 4 / 1000 is the tolerance's double
  const GateResult r = gate({1000.0}, {1004.1}, "f16");
  EXPECT_FALSE(r.passed);
  EXPECT_NEAR(r.error, 4.1e-3, 1e-12);
  EXPECT_EQ(r.reason, "scale-normalised error 0.0041 exceeds the f16 tolerance 0.004");
}

TEST(Gate, IntegersMatchExactly) {
  EXPECT_TRUE(gate({3, 4}, {3, 4}, "i32").passed);
  EXPECT_FALSE(gate({3, 4}, {3, 5}, "i32").passed);
}

TEST(Gate, MatchingNaNAndInfinityPositionsPass) {
  const double inf = INFINITY;
  EXPECT_TRUE(gate({NAN, inf, -inf, 1.0}, {NAN, inf, -inf, 1.0}).passed);
}

TEST(Gate, ANaNWhereTheNativeValueIsFiniteRejects) {
  const GateResult r = gate({1.0, 2.0}, {1.0, NAN});
  EXPECT_FALSE(r.passed);
  EXPECT_TRUE(std::isinf(r.error));
  EXPECT_EQ(r.reason,
            "a NaN where the native output is a number at element 1 (native 2, candidate nan)");
}

TEST(Gate, AMissingNaNOrAMismatchedInfinityRejects) {
  EXPECT_EQ(gate({NAN}, {0.0}).reason,
            "no NaN where the native output has one at element 0 (native nan, candidate 0)");
  EXPECT_EQ(gate({INFINITY}, {-INFINITY}).reason,
            "an infinity that does not match at element 0 (native inf, candidate -inf)");
  EXPECT_FALSE(gate({1.0}, {INFINITY}).passed);
}

TEST(Gate, AllZeroOutputsAreNormalisedByTheSmallestNormal) {
  EXPECT_TRUE(gate({0.0, 0.0}, {0.0, 0.0}, "f16").passed);
  EXPECT_FALSE(gate({0.0, 0.0}, {0.0, 1e-5}, "f16").passed);
}

TEST(Gate, SizesAndDtypesAreChecked) {
  EXPECT_EQ(gate({1.0, 2.0}, {1.0}).reason, "the candidate has 1 elements, the native output 2");
  EXPECT_THROW(gate({1.0}, {1.0}, "f8"), UserError);
}

}  // namespace
}  // namespace metile::tune
