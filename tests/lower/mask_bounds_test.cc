// The masks of a grouped access as bounds (mask_bounds.h): comparisons of one invariant whose
// varying sides are a constant apart form a family tested by its tightest member, with the
// range of a 32-bit family checked widened unless the caller checks it; anything else stays
// as it is.
#include "metile/lower/mask_bounds.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "metile/ir/parser.h"
#include "tests/lower/named_values.h"

namespace metile::lower {
namespace {

constexpr const char* kText = R"(metal.kernel @k(%n: i32, %m: i32, %lo: i32, %w: i64, %flag: i1)
    attributes {threadgroup_bytes = 0, threads_per_threadgroup = 64} {
  %t = thread_index {axis = 0} : i32
  %c1 = constant {value = 1} : i32
  %c2 = constant {value = 2} : i32
  %c3 = constant {value = 3} : i32
  %i0 = shl %t, %c2 : i32
  %i1 = add %i0, %c1 : i32
  %i2 = add %i0, %c2 : i32
  %i3 = add %i0, %c3 : i32
  %lt0 = cmp %i0, %n {pred = "lt"} : i1
  %lt1 = cmp %i1, %n {pred = "lt"} : i1
  %lt2 = cmp %i2, %n {pred = "lt"} : i1
  %lt3 = cmp %i3, %n {pred = "lt"} : i1
  %gt0 = cmp %n, %i0 {pred = "gt"} : i1
  %gt3 = cmp %n, %i3 {pred = "gt"} : i1
  %ge0 = cmp %i0, %lo {pred = "ge"} : i1
  %ge2 = cmp %i2, %lo {pred = "ge"} : i1
  %ltm1 = cmp %i1, %m {pred = "lt"} : i1
  %ltm3 = cmp %i3, %m {pred = "lt"} : i1
  %eq0 = cmp %i0, %n {pred = "eq"} : i1
  %eq1 = cmp %i1, %n {pred = "eq"} : i1
  %j0 = cast %i0 : i64
  %k1 = constant {value = 1} : i64
  %j1 = add %j0, %k1 : i64
  %wl0 = cmp %j0, %w {pred = "le"} : i1
  %wl1 = cmp %j1, %w {pred = "le"} : i1
  %both = and %lt0, %flag : i1
  %nested = and %both, %lt0 : i1
}
)";

class MaskBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_ = ir::parse(kText);
    names_ = named_values(kernel_, kText);
  }
  ir::ValueId v(const std::string& name) const { return names_.at(name); }
  MaskTerms terms(const std::vector<std::string>& leaves, const Range& checked = {}) const {
    std::vector<ir::ValueId> values;
    for (const std::string& l : leaves) values.push_back(v(l));
    return mask_terms(kernel_, IndexAnalysis(kernel_), values, checked);
  }

  ir::Kernel kernel_;
  std::map<std::string, ir::ValueId> names_;
};

TEST_F(MaskBoundsTest, AnUpperBoundFamilyIsTestedByItsLargestMember) {
  const MaskTerms t = terms({"lt0", "lt1", "lt2", "lt3"});
  EXPECT_EQ(t.conjuncts, std::vector<ir::ValueId>{v("lt3")});
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0], (Range{v("i0"), v("i3"), 3}));
}

TEST_F(MaskBoundsTest, TheRangeTheCallerChecksIsNotCheckedAgain) {
  const MaskTerms t = terms({"lt0", "lt1", "lt2", "lt3"}, Range{v("i0"), v("i3"), 3});
  EXPECT_EQ(t.conjuncts, std::vector<ir::ValueId>{v("lt3")});
  EXPECT_TRUE(t.ranges.empty());
}

TEST_F(MaskBoundsTest, ReadsTheVaryingSideOnTheRightAndLowerBoundsByTheSmallest) {
  // n > i0 + k is i0 + k < n: the largest decides; i0 + k >= lo: the smallest.
  EXPECT_EQ(terms({"gt0", "gt3"}).conjuncts, std::vector<ir::ValueId>{v("gt3")});
  EXPECT_EQ(terms({"ge2", "ge0"}).conjuncts, std::vector<ir::ValueId>{v("ge0")});
}

TEST_F(MaskBoundsTest, FamiliesOfDifferentInvariantsOrDirectionsStayApart) {
  const MaskTerms t = terms({"lt0", "ltm1", "ge0", "lt3", "ltm3", "ge2"});
  EXPECT_EQ(t.conjuncts, (std::vector<ir::ValueId>{v("lt3"), v("ltm3"), v("ge0")}));
  // lt's and ge's ranges are i0 .. i3 and i0 .. i2; ltm's i1 .. i3.
  EXPECT_EQ(t.ranges, (std::vector<Range>{
                          {v("i0"), v("i3"), 3}, {v("i1"), v("i3"), 2}, {v("i0"), v("i2"), 2}}));
}

TEST_F(MaskBoundsTest, EqualitiesAndOtherConjunctsAreKeptAsTheyAre) {
  const MaskTerms t = terms({"eq0", "flag", "eq1"});
  EXPECT_EQ(t.conjuncts, (std::vector<ir::ValueId>{v("eq0"), v("flag"), v("eq1")}));
  EXPECT_TRUE(t.ranges.empty());
}

TEST_F(MaskBoundsTest, SixtyFourBitValuesNeedNoRangeCheck) {
  const MaskTerms t = terms({"wl0", "wl1"});
  EXPECT_EQ(t.conjuncts, std::vector<ir::ValueId>{v("wl1")});
  EXPECT_TRUE(t.ranges.empty());
}

TEST_F(MaskBoundsTest, ConjunctsFlattenAndTreesOnce) {
  EXPECT_EQ(conjuncts(IndexAnalysis(kernel_), v("nested")),
            (std::vector<ir::ValueId>{v("lt0"), v("flag")}));
}

}  // namespace
}  // namespace metile::lower
