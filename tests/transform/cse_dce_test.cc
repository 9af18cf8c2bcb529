#include <gtest/gtest.h>

#include "pass_test_util.h"

namespace metile::transform::testing {
namespace {

TEST(Cse, MergesIdenticalPureOps) {
  EXPECT_EQ(run_pass("cse", tile_kernel("  %0 = program_id {axis = 0} : i32\n"
                                        "  %1 = program_id {axis = 0} : i32\n"
                                        "  %2 = program_id {axis = 1} : i32\n"
                                        "  %3 = add %0, %2 : i32\n"
                                        "  %4 = add %1, %2 : i32\n"
                                        "  %5 = add %3, %4 : i32\n"
                                        "  store %p, %5\n")),
            tile_kernel("  %0 = program_id {axis = 0} : i32\n"
                        "  %1 = program_id {axis = 1} : i32\n"
                        "  %2 = add %0, %1 : i32\n"
                        "  %3 = add %2, %2 : i32\n"
                        "  store %p, %3\n"));
}

TEST(Cse, KeepsLoadsAndSimdCollectives) {
  const std::string text = tile_kernel(
      "  %0 = load %p : i32\n"
      "  store %p, %n\n"
      "  %1 = load %p : i32\n"
      "  %2 = simd_sum %0 : i32\n"
      "  %3 = simd_sum %0 : i32\n"
      "  %4 = add %1, %2 : i32\n"
      "  %5 = add %4, %3 : i32\n"
      "  store %p, %5\n");
  EXPECT_EQ(run_pass("cse", text), text);
}

TEST(Cse, OuterValuesAreVisibleInRegionsButNotTheReverse) {
  std::string out = run_pass("cse", tile_kernel("  %0 = constant {value = 1} : i32\n"
                                                "  %1 = cmp %n, %0 {pred = \"lt\"} : i1\n"
                                                "  %2 = if %1 : i32 {\n"
                                                "    %3 = constant {value = 1} : i32\n"
                                                "    %4 = constant {value = 7} : i32\n"
                                                "    %5 = add %3, %4 : i32\n"
                                                "    yield %5\n"
                                                "  } else {\n"
                                                "    %6 = constant {value = 7} : i32\n"
                                                "    yield %6\n"
                                                "  }\n"
                                                "  %7 = constant {value = 7} : i32\n"
                                                "  %8 = add %2, %7 : i32\n"
                                                "  store %p, %8\n"));
  EXPECT_EQ(out, tile_kernel("  %0 = constant {value = 1} : i32\n"
                             "  %1 = cmp %n, %0 {pred = \"lt\"} : i1\n"
                             "  %2 = if %1 : i32 {\n"
                             "    %3 = constant {value = 7} : i32\n"
                             "    %4 = add %0, %3 : i32\n"
                             "    yield %4\n"
                             "  } else {\n"
                             "    %5 = constant {value = 7} : i32\n"
                             "    yield %5\n"
                             "  }\n"
                             "  %6 = constant {value = 7} : i32\n"
                             "  %7 = add %2, %6 : i32\n"
                             "  store %p, %7\n"));
}

TEST(Dce, RemovesUnusedPureOpsAndKeepsEffects) {
  EXPECT_EQ(run_pass("dce", tile_kernel("  %0 = program_id {axis = 0} : i32\n"
                                        "  %1 = add %0, %0 : i32\n"
                                        "  %2 = load %p : i32\n"
                                        "  %3 = shared_alloc {size = 4} : ptr<f32, threadgroup>\n"
                                        "  barrier {mem = \"all\", scope = \"threadgroup\"}\n"
                                        "  store %p, %n\n")),
            tile_kernel("  barrier {mem = \"all\", scope = \"threadgroup\"}\n"
                        "  store %p, %n\n"));
}

TEST(Dce, LoopsWithoutEffectsGoWhenUnused) {
  const std::string loop_with_store =
      "  %0 = constant {value = 0} : i32\n"
      "  %1 = for %0, %n, %n, %0 : i32 {\n"
      "  ^(%2: i32, %3: i32):\n"
      "    store %p, %2\n"
      "    yield %3\n"
      "  }\n";
  EXPECT_EQ(run_pass("dce", tile_kernel(loop_with_store)), tile_kernel(loop_with_store));
  EXPECT_EQ(run_pass("dce", tile_kernel("  %0 = constant {value = 0} : i32\n"
                                        "  %1 = for %0, %n, %n, %0 : i32 {\n"
                                        "  ^(%2: i32, %3: i32):\n"
                                        "    %4 = add %2, %3 : i32\n"
                                        "    yield %4\n"
                                        "  }\n")),
            tile_kernel(""));
}

TEST(Dce, RemovesDeadOpsInsideRegions) {
  EXPECT_EQ(run_pass("dce", tile_kernel("  %0 = cmp %n, %n {pred = \"eq\"} : i1\n"
                                        "  if %0 {\n"
                                        "    %1 = mul %n, %n : i32\n"
                                        "    store %p, %n\n"
                                        "    yield\n"
                                        "  } else {\n"
                                        "    yield\n"
                                        "  }\n")),
            tile_kernel("  %0 = cmp %n, %n {pred = \"eq\"} : i1\n"
                        "  if %0 {\n"
                        "    store %p, %n\n"
                        "    yield\n"
                        "  } else {\n"
                        "    yield\n"
                        "  }\n"));
}

}  // namespace
}  // namespace metile::transform::testing
