#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "pass_test_util.h"

namespace metile::transform::testing {
namespace {

std::string canonical(const std::string& body) {
  return run_pass("canonicalize", tile_kernel(body));
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `(arange(0, 16) op c) pred bound`, stored under that mask: "1" when canonicalize folds it to
// true (the store loses its mask), "0" when to false (the store goes), "" when it stays.
std::string decided(const std::string& pred, int64_t bound, const std::string& op, int64_t c) {
  std::string body =
      "  %0 = arange {end = 16, start = 0} : tile<16xi32>\n"
      "  %1 = constant {value = C} : i32\n"
      "  %2 = splat %1 : tile<16xi32>\n"
      "  %3 = OP %0, %2 : tile<16xi32>\n"
      "  %4 = constant {value = BOUND} : i32\n"
      "  %5 = splat %4 : tile<16xi32>\n"
      "  %6 = cmp %3, %5 {pred = \"PRED\"} : tile<16xi1>\n"
      "  %7 = splat %p : tile<16xptr<i32>>\n"
      "  %8 = ptr_add %7, %0 : tile<16xptr<i32>>\n"
      "  store %8, %0, %6\n";
  for (const auto& [name, value] :
       {std::pair<std::string, std::string>{"BOUND", std::to_string(bound)},
        {"PRED", pred},
        {"OP", op},
        {"C", std::to_string(c)}})
    body.replace(body.find(name), name.size(), value);
  const std::string out = canonical(body);
  if (has(out, "cmp ")) return "";
  return has(out, "store ") ? "1" : "0";
}

TEST(Canonicalize, ComparisonsTheIntervalsDecideFold) {
  struct Case {
    const char* pred;
    int64_t bound;
    const char* op;
    int64_t c;
    const char* folded;
  };
  const Case cases[] = {
      // i + 0 in [0, 15], against every predicate: true, false, or undecided.
      {"lt", 16, "add", 0, "1"},
      {"lt", 0, "add", 0, "0"},
      {"lt", 15, "add", 0, ""},
      {"le", 15, "add", 0, "1"},
      {"le", -1, "add", 0, "0"},
      {"le", 14, "add", 0, ""},
      {"gt", -1, "add", 0, "1"},
      {"gt", 15, "add", 0, "0"},
      {"gt", 0, "add", 0, ""},
      {"ge", 0, "add", 0, "1"},
      {"ge", 16, "add", 0, "0"},
      {"ge", 1, "add", 0, ""},
      {"eq", 16, "add", 0, "0"},
      {"eq", 3, "add", 0, ""},
      {"ne", -1, "add", 0, "1"},
      {"ne", 3, "add", 0, ""},
      // Products and differences: i * 2 in [0, 30], i - 16 in [-16, -1], i * -1 in [-15, 0].
      {"lt", 31, "mul", 2, "1"},
      {"lt", 30, "mul", 2, ""},
      {"lt", 0, "sub", 16, "1"},
      {"ge", -16, "sub", 16, "1"},
      {"lt", 0, "mul", -1, ""},
      {"le", 0, "mul", -1, "1"},
      // A product that could leave i32 has no interval (it would wrap on the device);
      // 15 * 2^27 < 2^31 does not.
      {"ge", 0, "mul", 1 << 28, ""},
      {"ge", 0, "mul", 1 << 27, "1"}};
  for (const Case& k : cases)
    EXPECT_EQ(decided(k.pred, k.bound, k.op, k.c), k.folded)
        << "(i " << k.op << " " << k.c << ") " << k.pred << " " << k.bound;
}

TEST(Canonicalize, FoldsIntegerArithmetic) {
  std::string out = canonical(
      "  %0 = constant {value = 6} : i32\n"
      "  %1 = constant {value = 7} : i32\n"
      "  %2 = mul %0, %1 : i32\n"
      "  store %p, %2\n");
  EXPECT_TRUE(has(out, "%2 = constant {value = 42} : i32\n  store %p, %2\n")) << out;
}

TEST(Canonicalize, IntegersWrapToTheirWidth) {
  std::string out = canonical(
      "  %0 = constant {value = 2147483647} : i32\n"
      "  %1 = constant {value = 1} : i32\n"
      "  %2 = add %0, %1 : i32\n"
      "  store %p, %2\n"
      "  %3 = constant {value = 0} : u32\n"
      "  %4 = constant {value = 1} : u32\n"
      "  %5 = sub %3, %4 : u32\n"
      "  %6 = cast %5 : i32\n"
      "  store %p, %6\n");
  EXPECT_TRUE(has(out, "%2 = constant {value = -2147483648} : i32")) << out;
  EXPECT_TRUE(has(out, "%5 = constant {value = 4294967295} : u32")) << out;
  EXPECT_TRUE(has(out, "%6 = constant {value = -1} : i32")) << out;
}

TEST(Canonicalize, LeavesWhatIsNotExact) {
  const std::string body =
      "  %0 = constant {value = -2147483648} : i32\n"
      "  %1 = constant {value = -1} : i32\n"
      "  %2 = div %0, %1 : i32\n"
      "  store %p, %2\n"
      "  %3 = constant {value = 0.1} : f16\n"
      "  %4 = add %3, %3 : f16\n"
      "  store %h, %4\n"
      "  %5 = constant {value = nan} : f32\n"
      "  %6 = cast %5 : i32\n"
      "  store %p, %6\n"
      "  %7 = exp %5 : f32\n"
      "  store %f, %7\n";
  EXPECT_EQ(canonical(body), ir::print(ir::parse(tile_kernel(body))));
}

TEST(Canonicalize, RejectsAnIntegerDivisionByTheConstantZero) {
  for (const char* op : {"div", "rem", "floordiv"}) {
    const std::string body =
        "  %1 = constant {value = 0} : i32\n"
        "  %2 = " +
        std::string(op) +
        " %n, %1 : i32\n"
        "  store %p, %2\n";
    try {
      canonical(body);
      ADD_FAILURE() << op << " by the constant 0 was accepted";
    } catch (const UserError& e) {
      EXPECT_EQ(e.rule(),
                std::string(op) + ": integer division by zero (the divisor is the constant 0)");
    }
  }
}

TEST(Canonicalize, FoldsF32InSinglePrecision) {
  std::string out = canonical(
      "  %0 = constant {value = 0.1} : f32\n"
      "  %1 = constant {value = 0.2} : f32\n"
      "  %2 = add %0, %1 : f32\n"
      "  store %f, %2\n"
      "  %3 = constant {value = 3.7} : f32\n"
      "  %4 = neg %3 : f32\n"
      "  %5 = cast %4 : i32\n"
      "  store %p, %5\n");
  EXPECT_TRUE(has(out, "%2 = constant {value = 0.30000001192092896} : f32")) << out;
  EXPECT_TRUE(has(out, "%5 = constant {value = -3} : i32")) << out;
}

TEST(Canonicalize, ComparisonsAndSelect) {
  std::string out = canonical(
      "  %0 = constant {value = 3} : i32\n"
      "  %1 = constant {value = 5} : i32\n"
      "  %2 = cmp %0, %1 {pred = \"lt\"} : i1\n"
      "  %3 = select %2, %n, %0 : i32\n"
      "  store %p, %3\n");
  EXPECT_TRUE(has(out, "%2 = constant {value = 1} : i1")) << out;
  EXPECT_TRUE(has(out, "store %p, %n\n")) << out;
  EXPECT_FALSE(has(out, "select")) << out;
}

TEST(Canonicalize, AlgebraicIdentities) {
  std::string out = canonical(
      "  %0 = constant {value = 0} : i32\n"
      "  %1 = constant {value = 1} : i32\n"
      "  %2 = add %n, %0 : i32\n"
      "  %3 = mul %1, %2 : i32\n"
      "  %4 = mul %3, %0 : i32\n"
      "  %5 = sub %3, %0 : i32\n"
      "  %6 = or %5, %0 : i32\n"
      "  %7 = shl %6, %0 : i32\n"
      "  store %p, %7\n"
      "  store %p, %4\n");
  EXPECT_TRUE(has(out, "store %p, %n\n  store %p, %0\n")) << out;
  EXPECT_FALSE(has(out, "add")) << out;
}

TEST(Canonicalize, FloatIdentitiesRespectSignedZero) {
  std::string out = canonical(
      "  %0 = load %f : f32\n"
      "  %1 = constant {value = 0.0} : f32\n"
      "  %2 = constant {value = -0.0} : f32\n"
      "  %3 = add %0, %1 : f32\n"
      "  %4 = add %3, %2 : f32\n"
      "  %5 = constant {value = 1.0} : f32\n"
      "  %6 = mul %4, %5 : f32\n"
      "  %7 = mul %6, %1 : f32\n"
      "  store %f, %7\n");
  // x + 0.0 is not x for x = -0.0, and x * 0.0 is not 0 for inf or nan: both stay.
  EXPECT_TRUE(has(out, "%3 = add %0, %1 : f32")) << out;
  EXPECT_TRUE(has(out, "%5 = mul %3, %1 : f32")) << out;
  EXPECT_FALSE(has(out, ", %2 : f32")) << out;
}

TEST(Canonicalize, FloatFloorDivisionByOneStays) {
  const std::string body =
      "  %0 = load %f : f32\n"
      "  %1 = constant {value = 1.0} : f32\n"
      "  %2 = floordiv %0, %1 : f32\n"
      "  store %f, %2\n";
  EXPECT_EQ(canonical(body), ir::print(ir::parse(tile_kernel(body))));
}

TEST(Canonicalize, SplatConstantsFoldToSplats) {
  std::string out = canonical(
      "  %0 = constant {value = 2} : i32\n"
      "  %1 = splat %0 : tile<16xi32>\n"
      "  %2 = constant {value = 3} : i32\n"
      "  %3 = splat %2 : tile<16xi32>\n"
      "  %4 = add %1, %3 : tile<16xi32>\n"
      "  %5 = splat %p : tile<16xptr<i32>>\n"
      "  store %5, %4\n");
  EXPECT_TRUE(has(out, "%4 = constant {value = 5} : i32\n  %5 = splat %4 : tile<16xi32>\n")) << out;
}

TEST(Canonicalize, BroadcastOfSplatIsASplat) {
  std::string out = canonical(
      "  %0 = splat %n : tile<16xi32>\n"
      "  %1 = expand_dims %0 {axis = 0} : tile<1x16xi32>\n"
      "  %2 = broadcast %1 : tile<8x16xi32>\n"
      "  %3 = splat %p : tile<8x16xptr<i32>>\n"
      "  store %3, %2\n");
  EXPECT_TRUE(has(out, "%2 = splat %n : tile<8x16xi32>")) << out;
}

TEST(Canonicalize, ConstantIfIsInlined) {
  std::string out = canonical(
      "  %0 = constant {value = 0} : i1\n"
      "  %1 = if %0 : i32 {\n"
      "    yield %n\n"
      "  } else {\n"
      "    %2 = constant {value = 9} : i32\n"
      "    store %p, %2\n"
      "    yield %2\n"
      "  }\n"
      "  store %p, %1\n");
  EXPECT_EQ(out, tile_kernel("  %0 = constant {value = 0} : i1\n"
                             "  %1 = constant {value = 9} : i32\n"
                             "  store %p, %1\n"
                             "  store %p, %1\n"));
}

TEST(Canonicalize, LoopThatNeverRunsYieldsItsInit) {
  std::string out = canonical(
      "  %0 = constant {value = 4} : i32\n"
      "  %1 = constant {value = 1} : i32\n"
      "  %2 = for %0, %1, %1, %n : i32 {\n"
      "  ^(%3: i32, %4: i32):\n"
      "    store %p, %4\n"
      "    yield %3\n"
      "  }\n"
      "  store %p, %2\n");
  EXPECT_FALSE(has(out, "for")) << out;
  EXPECT_TRUE(has(out, "store %p, %n\n")) << out;
}

TEST(Canonicalize, MetalIR) {
  std::string out = run_pass(
      "canonicalize",
      "metal.kernel @m(%p: ptr<i32> {access = \"write\"}) attributes {threadgroup_bytes = 0, "
      "threads_per_threadgroup = 32} {\n"
      "  %0 = thread_index {axis = 0} : i32\n"
      "  %1 = constant {value = 8} : i32\n"
      "  %2 = constant {value = 3} : i32\n"
      "  %3 = shl %1, %2 : i32\n"
      "  %4 = add %0, %3 : i32\n"
      "  %5 = ptr_add %p, %4 : ptr<i32>\n"
      "  store %5, %0\n"
      "}\n");
  EXPECT_TRUE(has(out, "%3 = constant {value = 64} : i32")) << out;
}

TEST(Canonicalize, UnchangedInputIsReturnedUnchanged) {
  const std::string text = tile_kernel(
      "  %0 = program_id {axis = 0} : i32\n"
      "  %1 = add %0, %n : i32\n"
      "  store %p, %1\n");
  EXPECT_EQ(run_pass("canonicalize", text), text);
}

}  // namespace
}  // namespace metile::transform::testing
