// Each broken rule gives a diagnostic naming the op, the rule and the values.
#include <gtest/gtest.h>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "sample_kernels.h"

namespace metile::ir {
namespace {

std::vector<std::string> diagnostics(const Kernel& k) {
  std::vector<std::string> r;
  for (const Diagnostic& d : verify(k)) r.push_back(d.str());
  return r;
}

std::vector<std::string> diagnostics(
    const std::string& body, const std::string& params = "%x: ptr<f32> {access = \"read\"}") {
  return diagnostics(parse("tile.kernel @k(" + params + ") {\n" + body + "}\n"));
}

std::vector<std::string> metal_diagnostics(const std::string& body, const std::string& attrs) {
  return diagnostics(parse("metal.kernel @k(%x: ptr<f32> {access = \"read\"}) attributes {" +
                           attrs + "} {\n" + body + "}\n"));
}

using Strings = std::vector<std::string>;

TEST(TileVerifier, SamplesAreValid) {
  for (const Kernel& k :
       {samples::vector_add(), samples::softmax_like(), samples::if_with_results(),
        samples::tensor_descriptors(), samples::shared_and_barrier(), samples::two_d_tiles()})
    EXPECT_EQ(diagnostics(k), Strings{}) << print(k);
}

TEST(TileVerifier, LoadMaskShape) {
  EXPECT_EQ(diagnostics("  %0 = arange {end = 256, start = 0} : tile<256xi32>\n"
                        "  %1 = splat %x : tile<256xptr<f32>>\n"
                        "  %2 = ptr_add %1, %0 : tile<256xptr<f32>>\n"
                        "  %3 = arange {end = 128, start = 0} : tile<128xi32>\n"
                        "  %4 = cmp %3, %3 {pred = \"lt\"} : tile<128xi1>\n"
                        "  %5 = constant {value = 0.0} : f32\n"
                        "  %6 = splat %5 : tile<256xf32>\n"
                        "  %7 = load %2, %4, %6 : tile<256xf32>\n"),
            Strings{"load: mask shape [128] does not match pointer shape [256] (%4: tile<128xi1>, "
                    "%2: tile<256xptr<f32>>)"});
}

TEST(TileVerifier, TileDimensionsArePowersOfTwo) {
  EXPECT_EQ(
      diagnostics("  %0 = arange {end = 100, start = 0} : tile<100xi32>\n"),
      Strings{"arange: tile dimensions must be powers of two, got [100] (%0: tile<100xi32>)"});
}

TEST(TileVerifier, MetalOpInTileIR) {
  EXPECT_EQ(diagnostics("  %0 = simd_lane : i32\n"), Strings{"simd_lane: is not an op of Tile IR"});
}

TEST(TileVerifier, UseOutsideItsRegion) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 0} : i32\n"
                        "  for %0, %0, %0 {\n"
                        "  ^(%1: i32):\n"
                        "    %2 = add %1, %1 : i32\n"
                        "    yield\n"
                        "  }\n"
                        "  %3 = cast %2 : f32\n"),
            Strings{"cast: uses a value outside the region that defines it (%2: i32)"});
}

TEST(TileVerifier, UseBeforeDefinition) {
  Kernel k = samples::vector_add();
  std::swap(k.body.ops[0], k.body.ops[2]);  // mul before its operands
  Strings d = diagnostics(k);
  EXPECT_EQ(d, (Strings{"mul: uses a value before its definition (%2: i32)",
                        "mul: uses a value before its definition (%1: i32)"}));
}

TEST(TileVerifier, YieldPlacement) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 0} : i32\n"
                        "  for %0, %0, %0 {\n"
                        "  ^(%1: i32):\n"
                        "    yield\n"
                        "    %2 = add %1, %1 : i32\n"
                        "  }\n"
                        "  yield\n"),
            (Strings{"yield: yield must be the last op of a for or if region",
                     "for: a region must end with yield",
                     "yield: yield must be the last op of a for or if region"}));
}

TEST(TileVerifier, LoopCarriedTypes) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 0} : i32\n"
                        "  %1 = constant {value = 0.0} : f32\n"
                        "  %2 = for %0, %0, %0, %1 : f32 {\n"
                        "  ^(%3: i32, %4: f32):\n"
                        "    yield %3\n"
                        "  }\n"),
            Strings{"for: yield value 0 must be f32 (the loop carries it) (%3: i32)"});
  EXPECT_EQ(diagnostics("  %0 = constant {value = 0} : i32\n"
                        "  %1 = constant {value = 0.0} : f32\n"
                        "  %2 = for %0, %0, %0, %1 : f32 {\n"
                        "  ^(%3: i32):\n"
                        "    yield %1\n"
                        "  }\n"),
            Strings{"for: the body takes the induction variable and 1 carried value(s), got 1 "
                    "argument(s)"});
}

TEST(TileVerifier, IfBranchesYieldTheResults) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 1} : i1\n"
                        "  %1 = constant {value = 0.0} : f32\n"
                        "  %2 = if %0 : f32 {\n"
                        "    yield %1\n"
                        "  } else {\n"
                        "    yield %0\n"
                        "  }\n"),
            Strings{"if: yield value 0 must be f32 (the if's results) (%0: i1)"});
}

TEST(TileVerifier, ElementwiseTypes) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 0} : i32\n"
                        "  %1 = constant {value = 0.0} : f32\n"
                        "  %2 = add %0, %1 : i32\n"
                        "  %3 = cmp %0, %0 {pred = \"lt\"} : i32\n"
                        "  %4 = xor %1, %1 : f32\n"
                        "  %5 = cmp %0, %0 {pred = \"less\"} : i1\n"),
            (Strings{"add: operands and result must have one type (%0: i32, %1: f32, %2: i32)",
                     "cmp: the result must be i1 of the operand shape [] (%0: i32, %3: i32)",
                     "xor: bitwise operations need integer or i1 operands (%1: f32, %1: f32)",
                     "cmp: attribute pred = \"less\" is not one of lt|le|gt|ge|eq|ne"}));
}

TEST(TileVerifier, ReduceAndBroadcast) {
  EXPECT_EQ(diagnostics("  %0 = arange {end = 16, start = 0} : tile<16xi32>\n"
                        "  %1 = reduce %0 {kind = \"sum\"} : f32\n"
                        "  %2 = broadcast %0 : tile<32xi32>\n"),
            (Strings{"reduce: the result must be a i32 scalar (%0: tile<16xi32>, %1: f32)",
                     "broadcast: cannot broadcast shape [16] to [32] (%0: tile<16xi32>, %2: "
                     "tile<32xi32>)"}));
}

TEST(TileVerifier, OperandCounts) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 0} : i32\n"
                        "  %1 = add %0 : i32\n"),
            Strings{"add: takes 2 operand(s), got 1 (%0: i32)"});
}

TEST(TileVerifier, Parameters) {
  EXPECT_EQ(diagnostics("", "%x: ptr<f32>, %n: i32 {access = \"read\"}"),
            (Strings{"kernel: parameter x needs access read, write or read_write, got \"\" (%x: "
                     "ptr<f32>)",
                     "kernel: parameter n is a scalar and takes no access (%n: i32)"}));
}

// i8 and u8 are dtypes of their own: no implicit mixing with each other or with i32, and
// constants within their ranges.
TEST(TileVerifier, EightBitIntegersDoNotMix) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 1} : i8\n"
                        "  %1 = constant {value = 1} : u8\n"
                        "  %2 = add %0, %1 : i8\n"
                        "  %3 = constant {value = 1} : i32\n"
                        "  %4 = mul %0, %3 : i32\n"
                        "  %5 = constant {value = 128} : i8\n"
                        "  %6 = constant {value = -1} : u8\n"
                        "  %7 = arange {end = 16, start = 0} : tile<16xi32>\n"
                        "  %8 = splat %x : tile<16xptr<i8>>\n"
                        "  %9 = ptr_add %8, %7 : tile<16xptr<i8>>\n"
                        "  %10 = splat %1 : tile<16xu8>\n"
                        "  store %9, %10\n",
                        "%x: ptr<i8> {access = \"write\"}"),
            (Strings{"add: operands and result must have one type (%0: i8, %1: u8, %2: i8)",
                     "mul: operands and result must have one type (%0: i8, %3: i32, %4: i32)",
                     "constant: value 128 does not fit i8 (range -128..127) (%5: i8)",
                     "constant: value -1 does not fit u8 (range 0..255) (%6: u8)",
                     "store: the value must have the pointee dtype i8 (%10: tile<16xu8>, %9: "
                     "tile<16xptr<i8>>)"}));
}

// fp8 values move, convert and select; arithmetic, comparisons and reductions need a wider
// float (the frontends convert).
TEST(TileVerifier, Fp8ValuesOnlyMoveConvertAndSelect) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 1.5} : f8e4m3\n"
                        "  %1 = add %0, %0 : f8e4m3\n"
                        "  %2 = cmp %0, %0 {pred = \"lt\"} : i1\n"
                        "  %3 = exp %0 : f8e4m3\n"
                        "  %4 = cast %0 : f32\n"
                        "  %5 = cast %4 : f8e5m2\n"
                        "  %6 = select %2, %0, %0 : f8e4m3\n"
                        "  %7 = splat %0 : tile<16xf8e4m3>\n"
                        "  %8 = reduce %7 {kind = \"max\"} : f8e4m3\n"),
            (Strings{"add: f8e4m3 values are only loaded, stored, converted and selected; "
                     "convert them to a wider float (f16, bf16, f32) to compute (%0: f8e4m3, "
                     "%0: f8e4m3)",
                     "cmp: f8e4m3 values are only loaded, stored, converted and selected; "
                     "convert them to a wider float (f16, bf16, f32) to compute (%0: f8e4m3, "
                     "%0: f8e4m3)",
                     "exp: f8e4m3 values are only loaded, stored, converted and selected; "
                     "convert them to a wider float (f16, bf16, f32) to compute (%0: f8e4m3)",
                     "reduce: the operand must be a tile of numbers (not i1 or fp8) (%7: "
                     "tile<16xf8e4m3>)"}));
}

TEST(TileVerifier, TensorAccess) {
  EXPECT_EQ(diagnostics("  %0 = constant {value = 4} : i32\n"
                        "  %1 = make_tensor %x, %0, %0, %0, %0 {access = \"read\"} : desc<2xf32>\n"
                        "  %2 = arange {end = 16, start = 0} : tile<16xi32>\n"
                        "  %3 = tensor_load %1, %2 : tile<16xf32>\n"
                        "  %4 = tensor_load %1, %2, %2 : tile<16xf16>\n"),
            (Strings{"tensor_load: the tensor has rank 2 but 1 coordinate(s) were given (%1: "
                     "desc<2xf32>)",
                     "tensor_load: the value must be tile<16xf32> (the coordinates' shape, the "
                     "tensor's dtype) (%4: tile<16xf16>, %1: desc<2xf32>)"}));
}

TEST(MetalVerifier, SampleIsValid) {
  Kernel k = samples::metal_kernel();
  EXPECT_EQ(diagnostics(k), Strings{}) << print(k);
}

TEST(MetalVerifier, KernelAttributes) {
  EXPECT_EQ(metal_diagnostics("", "threadgroup_bytes = 20"),
            (Strings{"kernel: needs a positive integer attribute threads_per_threadgroup",
                     "kernel: needs an integer attribute threadgroup_bytes, non-negative and a "
                     "multiple of 16"}));
}

TEST(MetalVerifier, ThreadgroupBufferBounds) {
  EXPECT_EQ(metal_diagnostics("  %0 = threadgroup_buffer {offset = 32, size = 16} : ptr<f32, "
                              "threadgroup>\n",
                              "threadgroup_bytes = 64, threads_per_threadgroup = 32"),
            Strings{"threadgroup_buffer: bytes [32, 96) exceed threadgroup_bytes = 64 (%0: "
                    "ptr<f32, threadgroup>)"});
}

TEST(MetalVerifier, NoTilesOrTileOps) {
  EXPECT_EQ(metal_diagnostics("  %0 = arange {end = 16, start = 0} : tile<16xi32>\n"
                              "  %1 = constant {value = 0} : vec<3xi32>\n",
                              "threadgroup_bytes = 0, threads_per_threadgroup = 32"),
            (Strings{"arange: is not an op of Metal IR",
                     "arange: tiles do not exist in Metal IR (%0: tile<16xi32>)",
                     "constant: vectors have 2, 4 or 8 elements (%1: vec<3xi32>)",
                     "constant: the result must be a number scalar (%1: vec<3xi32>)"}));
}

TEST(MetalVerifier, VectorAccess) {
  EXPECT_EQ(metal_diagnostics("  %0 = load %x : vec<4xf32>\n"
                              "  %1 = load %x : vec<4xi32>\n"
                              "  store %x, %0\n",
                              "threadgroup_bytes = 0, threads_per_threadgroup = 32"),
            Strings{"load: the result must have the pointee dtype f32 (%x: ptr<f32>, %1: "
                    "vec<4xi32>)"});
}

TEST(VerifyOrThrow, InputErrorsAreUserErrors) {
  Kernel k = parse("tile.kernel @bad() {\n  %0 = simd_lane : i32\n}\n");
  try {
    verify_or_throw(k, "");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "invalid Tile IR in kernel bad:\n  simd_lane: is not an op of Tile IR");
  }
}

TEST(VerifyOrThrow, PassErrorsAreInternalErrorsWithTheIR) {
  Kernel k = parse("tile.kernel @bad() {\n  %0 = simd_lane : i32\n}\n");
  try {
    verify_or_throw(k, "my_pass");
    FAIL() << "no error";
  } catch (const InternalError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("pass my_pass produced invalid Tile IR in kernel bad:\n  simd_lane: is "
                        "not an op of Tile IR\ntile.kernel @bad() {\n  %0 = simd_lane : i32\n}\n"),
              std::string::npos)
        << what;
  }
  EXPECT_NO_THROW(verify_or_throw(samples::softmax_like(), "my_pass"));
}

}  // namespace
}  // namespace metile::ir
