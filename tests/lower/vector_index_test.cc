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
