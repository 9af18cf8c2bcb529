// Limits from the Target, checked before lowering and before a launch: OutOfResources names
// the kernel, the requested geometry and the limit.
#include <gtest/gtest.h>

#include "metile/check_offset_ranges.h"
#include "metile/check_resources.h"
#include "metile/ir/parser.h"
#include "metile/pipeline.h"
#include "metile/support/errors.h"

namespace metile {
namespace {

// A vector copy of one tile of `block` elements of `dtype`.
ir::Kernel copy(int64_t block, const std::string& dtype = "f32") {
  const std::string n = std::to_string(block), t = "tile<" + n + "x";
  return ir::parse(
      "tile.kernel @copy(%x: ptr<" + dtype + "> {access = \"read\"}, %y: ptr<" + dtype +
      "> {access = \"write\"}) {\n  %0 = arange {end = " + n + ", start = 0} : " + t +
      "i32>\n  %1 = splat %x : " + t + "ptr<" + dtype + ">>\n  %2 = ptr_add %1, %0 : " + t +
      "ptr<" + dtype + ">>\n  %3 = load %2 : " + t + dtype + ">\n  %4 = splat %y : " + t + "ptr<" +
      dtype + ">>\n  %5 = ptr_add %4, %0 : " + t + "ptr<" + dtype + ">>\n  store %5, %3\n}\n");
}

template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

TEST(CheckResources, ATileAboveTheTargetLimitIsRefusedBeforeLowering) {
  for (int64_t block : {int64_t{1} << 20, int64_t{1} << 24, int64_t{1} << 30})
    EXPECT_EQ(error_of<OutOfResources>([&] { compile_to_source(copy(block)); }),
              "out of resources: kernel 'copy': a tile<" + std::to_string(block) + "xi32> has " +
                  std::to_string(block) +
                  " elements; target host allows at most 32768 elements per tile");
}

TEST(CheckResources, TheLargestTileThatFitsCompiles) {
  EXPECT_NO_THROW(compile_to_source(copy(32768)));
}

TEST(CheckResources, ElementsPerThreadAreBoundByTheRegisters) {
  ir::Kernel k = copy(32768, "i64");
  k.attrs["num_threads"] = int64_t{64};
  EXPECT_EQ(error_of<OutOfResources>([&] { compile_to_source(k); }),
            "out of resources: kernel 'copy': a tile<32768xi64> on 64 threads puts 512 "
            "elements in each thread, at least 1024 32-bit registers; target host allows 128 "
            "per thread");
}

TEST(CheckResources, GridsWithinTheTargetLimits) {
  const target::Target& host = target::default_target();
  EXPECT_NO_THROW(check_grid("k", {1 << 24, 1, 1}, host));
  EXPECT_EQ(error_of<OutOfResources>([&] {
              check_grid("k", {1 << 20, 1 << 20, 1 << 20}, host);
            }),
            "out of resources: launch of k with grid (1048576, 1048576, 1048576): more than "
            "16777216 threadgroups in all; target host allows at most 16777216 per launch");
  EXPECT_EQ(error_of<OutOfResources>([&] {
              check_grid("k", {int64_t{1} << 31, 1, 1}, target::target_by_name("sm90"));
            }),
            "out of resources: launch of k with grid (2147483648, 1, 1): dimension 0 has "
            "2147483648 threadgroups; target sm90 allows at most (2147483647, 65535, 65535)");
  EXPECT_EQ(error_of<OutOfResources>([&] {
              check_grid("k", {1, 65536, 1}, target::target_by_name("sm90"));
            }),
            "out of resources: launch of k with grid (1, 65536, 1): dimension 1 has 65536 "
            "threadgroups; target sm90 allows at most (2147483647, 65535, 65535)");
  EXPECT_EQ(error_of<UserError>([&] {
              check_grid("k", {0, 1, 1}, host);
            }),
            "launch of k with grid (0, 1, 1): every grid dimension must be at least 1");
}

// out[pid * 256 + arange(0, 256)] = 1 where that offset is below n.
const char* kBlockOffsets = R"(tile.kernel @fill(%out: ptr<f32> {access = "write"}, %n: i32) {
  %pid = program_id {axis = 0} : i32
  %block = constant {value = 256} : i32
  %start = mul %pid, %block : i32
  %lanes = arange {end = 256, start = 0} : tile<256xi32>
  %starts = splat %start : tile<256xi32>
  %offs = add %starts, %lanes : tile<256xi32>
  %ns = splat %n : tile<256xi32>
  %mask = cmp %offs, %ns {pred = "lt"} : tile<256xi1>
  %outs = splat %out : tile<256xptr<f32>>
  %ptrs = ptr_add %outs, %offs : tile<256xptr<f32>>
  %one = constant {value = 1.0} : f32
  %ones = splat %one : tile<256xf32>
  store %ptrs, %ones, %mask
}
)";

TEST(CheckOffsetRanges, AnOffsetThatWouldWrapIsRefusedNamingTheExpression) {
  const ir::Kernel k = ir::parse(kBlockOffsets, "fill.ir");
  const ir::ValueId n = k.params[1].value;
  // The largest grid whose offsets fit: (2^23 - 1) * 256 + 255 = 2^31 - 1.
  EXPECT_NO_THROW(OffsetRangeCheck(k).check({1 << 23, 1, 1}, 64, {{n, 1 << 30}}));
  EXPECT_EQ(error_of<UserError>([&] {
              OffsetRangeCheck(k).check({(1 << 23) + 1, 1, 1}, 64, {{n, 1 << 30}});
            }),
            "launch of fill with grid (8388609, 1, 1): the offset `program_id(0) * 256` reaches "
            "0..2147483648, beyond i32 (-2147483648..2147483647), so the address would wrap; "
            "launch a smaller grid or compute the offset in i64");
  EXPECT_EQ(error_of<UserError>([&] {
              OffsetRangeCheck(k).check({int64_t{1} << 31, 1, 1}, 64, {{n, 1 << 30}});
            }),
            "launch of fill with grid (2147483648, 1, 1): the offset `program_id(0) * 256` "
            "reaches 0..549755813632, beyond i32 (-2147483648..2147483647), so the address "
            "would wrap; launch a smaller grid or compute the offset in i64");
}

}  // namespace
}  // namespace metile
