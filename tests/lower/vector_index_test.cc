// The symbolic index reading behind grouped vector accesses (vector_index.h): constant
// differences through add, sub, mul, shl, or into known-zero bits and same-width casts,
// modulo 2^bits of the dtype, floordiv and rem by powers of two of bounded non-negative
// values, and no difference where a term is left.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "metile/ir/parser.h"
#include "metile/lower/vector_index.h"
#include "tests/lower/named_values.h"

namespace metile::lower {
namespace {

constexpr const char* kText = R"(metal.kernel @k(%x: ptr<f32> {access = "read"}, %s: i32)
    attributes {threadgroup_bytes = 0, threads_per_threadgroup = 64} {
  %t = thread_index {axis = 0} : i32
  %c1 = constant {value = 1} : i32
  %c2 = constant {value = 2} : i32
  %c3 = constant {value = 3} : i32
  %c4 = constant {value = 4} : i32
  %max = constant {value = 4294967295} : u32
  %shl = shl %t, %c2 : i32
  %mul = mul %t, %c4 : i32
  %plus1 = add %mul, %c1 : i32
  %or3 = or %shl, %c3 : i32
  %or4 = or %shl, %c4 : i32
  %back = sub %plus1, %c1 : i32
  %scaled = mul %plus1, %s : i32
  %scaled0 = mul %mul, %s : i32
  %rem = rem %plus1, %s : i32
  %u = cast %mul : u32
  %u1 = cast %plus1 : u32
  %wrapped = add %u1, %max : u32
  %wide = cast %mul : i64
  %c32 = constant {value = 32} : i32
  %c64 = constant {value = 64} : i32
  %c255 = constant {value = 255} : i32
  %low = and %t, %c255 : i32
  %quad = shl %low, %c2 : i32
  %quad1 = add %quad, %c1 : i32
  %quad3 = add %quad, %c3 : i32
  %quad4 = add %quad, %c4 : i32
  %quad64 = add %quad, %c64 : i32
  %div0 = floordiv %quad, %c32 : i32
  %div3 = floordiv %quad3, %c32 : i32
  %div4 = floordiv %quad4, %c32 : i32
  %div64 = floordiv %quad64, %c32 : i32
  %rem0 = rem %quad, %c32 : i32
  %rem1 = rem %quad1, %c32 : i32
  %rem3 = rem %quad3, %c32 : i32
  %rem64 = rem %quad64, %c32 : i32
  %srem0 = rem %mul, %c32 : i32
  %srem1 = rem %plus1, %c32 : i32
  %s4 = mul %s, %c4 : i32
  %s41 = add %s4, %c1 : i32
  %urem0 = rem %s4, %c32 : i32
  %urem1 = rem %s41, %c32 : i32
  %c5 = constant {value = 5} : i32
  %c6 = constant {value = 6} : i32
  %c7 = constant {value = 7} : i32
  %c28 = constant {value = 28} : i32
  %c96 = constant {value = 96} : i32
  %c127 = constant {value = 127} : i32
  %lane_pair = and %t, %c3 : i32
  %pair = shl %lane_pair, %c1 : i32
  %lane_row = and %t, %c28 : i32
  %row_bits = shl %lane_row, %c5 : i32
  %warp = and %t, %c96 : i32
  %warp_bits = shl %warp, %c6 : i32
  %pair_row = or %pair, %row_bits : i32
  %element = or %pair_row, %warp_bits : i32
  %c8312 = constant {value = 8312} : i32
  %c8313 = constant {value = 8313} : i32
  %c8314 = constant {value = 8314} : i32
  %e0 = add %element, %c8312 : i32
  %e1 = add %element, %c8313 : i32
  %e2 = add %element, %c8314 : i32
  %col0 = and %e0, %c127 : i32
  %col1 = and %e1, %c127 : i32
  %col2 = and %e2, %c127 : i32
  %row0 = shr %e0, %c7 : i32
  %row1 = shr %e1, %c7 : i32
  %c128 = constant {value = 128} : i32
  %rrem1 = rem %e1, %c128 : i32
  %row0_stride = mul %row0, %s : i32
  %row1_stride = mul %s, %row1 : i32
  %p = ptr_add %x, %plus1 : ptr<f32>
}
)";

// The kernel's values by name; the indices below are built from thread_index %t, the
// runtime scalar %s and constants.
class VectorIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kernel_ = ir::parse(kText);
    names_ = named_values(kernel_, kText);
  }
  std::optional<int64_t> difference(const std::string& a, const std::string& b) {
    return IndexAnalysis(kernel_).constant_difference(names_.at(a), names_.at(b));
  }

  ir::Kernel kernel_;
  std::map<std::string, ir::ValueId> names_;
};

TEST_F(VectorIndexTest, ReadsShiftsProductsAndOrIntoKnownZeroBits) {
  EXPECT_EQ(difference("shl", "mul"), 0);  // t << 2 == t * 4
  EXPECT_EQ(difference("mul", "plus1"), 1);
  EXPECT_EQ(difference("shl", "or3"), 3);  // the low two bits of t << 2 are zero
  EXPECT_EQ(difference("plus1", "back"), -1);
  EXPECT_EQ(difference("u", "u1"), 1);  // i32 -> u32 keeps every bit
}

// (t & 255) << 2 is in [0, 1020] and a multiple of 4: adding 0..3 crosses no multiple of 32,
// adding 64 adds two to the quotient.
TEST_F(VectorIndexTest, ReadsFloorDivAndRemByPowersOfTwoOfBoundedValues) {
  EXPECT_EQ(difference("div0", "div3"), 0);
  EXPECT_EQ(difference("div0", "div64"), 2);
  EXPECT_EQ(difference("rem0", "rem1"), 1);
  EXPECT_EQ(difference("rem0", "rem3"), 3);
  EXPECT_EQ(difference("rem0", "rem64"), 0);
  // The thread index itself is below threads_per_threadgroup.
  EXPECT_EQ(difference("srem0", "srem1"), 1);
  // Adding 4 may reach the next multiple of 32.
  EXPECT_EQ(difference("div0", "div4"), std::nullopt);
  // A runtime scalar may be negative, where C's rem of s * 4 + 1 is not rem of s * 4 plus 1.
  EXPECT_EQ(difference("urem0", "urem1"), std::nullopt);
}

// An accumulator element's linear index as the wgmma layout writes it: lane and warp bits
// or-ed into disjoint positions plus a constant, then its column (& 127) and row (>> 7). The
// bits of the sum below 128 that the lanes set (bits 1 and 2) leave room for the constant's
// (121 of 8313): adding it carries nothing into the row.
TEST_F(VectorIndexTest, ReadsAndAndShrOfDisjointBitsAsRemAndFloorDiv) {
  EXPECT_EQ(difference("pair", "pair_row"), std::nullopt);  // row bits are a term
  EXPECT_EQ(difference("col0", "col1"), 1);
  EXPECT_EQ(difference("row0", "row1"), 0);
  EXPECT_EQ(difference("col1", "rrem1"), 0);  // x & 127 is x % 128
  // Products of operands that read alike are one term.
  EXPECT_EQ(difference("row0_stride", "row1_stride"), 0);
  // 122 + 6 reaches 128: a lane may carry into the row.
  EXPECT_EQ(difference("col0", "col2"), std::nullopt);
}

TEST_F(VectorIndexTest, LeavesNoDifferenceWhereATermRemains) {
  EXPECT_EQ(difference("shl", "or4"), std::nullopt);         // 4 overlaps t's bits
  EXPECT_EQ(difference("scaled0", "scaled"), std::nullopt);  // a runtime stride
  EXPECT_EQ(difference("plus1", "rem"), std::nullopt);       // rem is opaque
  EXPECT_EQ(difference("mul", "wide"), std::nullopt);        // i32 against i64
  EXPECT_EQ(difference("t", "s"), std::nullopt);
}

// Modulo 2^32: adding 2^32 - 1 to a u32 is subtracting one, the wrapping that the packed
// path's widened-index check is there to catch at run time.
TEST_F(VectorIndexTest, DifferencesAreModuloTheDtypeWidth) {
  EXPECT_EQ(difference("u", "wrapped"), 0);
}

TEST_F(VectorIndexTest, PointersSplitIntoBaseAndIndex) {
  const std::optional<PointerParts> parts = IndexAnalysis(kernel_).pointer_parts(names_.at("p"));
  ASSERT_TRUE(parts);
  EXPECT_EQ(parts->base, names_.at("x"));
  EXPECT_EQ(parts->index, names_.at("plus1"));
  EXPECT_FALSE(IndexAnalysis(kernel_).pointer_parts(names_.at("x")));
}

}  // namespace
}  // namespace metile::lower
