// print -> parse -> print is the identity, for both dialects and every construct.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "metile/ir/builder.h"
#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "sample_kernels.h"

namespace metile::ir {
namespace {

std::string diagnostics_of(const Kernel& k) {
  std::string r;
  for (const Diagnostic& d : verify(k)) r += d.str() + "\n";
  return r;
}

void expect_round_trip(const Kernel& k) {
  ASSERT_EQ(diagnostics_of(k), "") << print(k);
  const std::string text = print(k);
  Kernel parsed = parse(text);
  EXPECT_EQ(print(parsed), text);
  EXPECT_EQ(diagnostics_of(parsed), "");
  EXPECT_EQ(parsed.dialect, k.dialect);
  EXPECT_EQ(parsed.name, k.name);
  ASSERT_EQ(parsed.params.size(), k.params.size());
  for (size_t i = 0; i < k.params.size(); ++i) {
    EXPECT_EQ(parsed.params[i].name, k.params[i].name);
    EXPECT_EQ(parsed.params[i].access, k.params[i].access);
  }
}

TEST(RoundTrip, VectorAdd) {
  expect_round_trip(samples::vector_add());
}
TEST(RoundTrip, SoftmaxLikeLoop) {
  expect_round_trip(samples::softmax_like());
}
TEST(RoundTrip, IfWithResults) {
  expect_round_trip(samples::if_with_results());
}
TEST(RoundTrip, TensorDescriptors) {
  expect_round_trip(samples::tensor_descriptors());
}
TEST(RoundTrip, SharedAndBarrier) {
  expect_round_trip(samples::shared_and_barrier());
}
TEST(RoundTrip, TwoDTiles) {
  expect_round_trip(samples::two_d_tiles());
}
TEST(RoundTrip, MetalKernel) {
  expect_round_trip(samples::metal_kernel());
}

TEST(Printer, VectorAddText) {
  EXPECT_EQ(print(samples::vector_add()),
            "tile.kernel @vector_add(%x: ptr<f32> {access = \"read\"}, %y: ptr<f32> {access = "
            "\"read\"}, %out: ptr<f32> {access = \"write\"}, %n: i32) attributes {BLOCK = 256} {\n"
            "  %0 = program_id {axis = 0} : i32\n"
            "  %1 = constant {value = 256} : i32\n"
            "  %2 = mul %0, %1 : i32\n"
            "  %3 = arange {end = 256, start = 0} : tile<256xi32>\n"
            "  %4 = splat %2 : tile<256xi32>\n"
            "  %5 = add %3, %4 : tile<256xi32>\n"
            "  %6 = splat %n : tile<256xi32>\n"
            "  %7 = cmp %5, %6 {pred = \"lt\"} : tile<256xi1>\n"
            "  %8 = splat %x : tile<256xptr<f32>>\n"
            "  %9 = ptr_add %8, %5 : tile<256xptr<f32>>\n"
            "  %10 = constant {value = 0.0} : f32\n"
            "  %11 = splat %10 : tile<256xf32>\n"
            "  %12 = load %9, %7, %11 : tile<256xf32>\n"
            "  %13 = splat %y : tile<256xptr<f32>>\n"
            "  %14 = ptr_add %13, %5 : tile<256xptr<f32>>\n"
            "  %15 = constant {value = 0.0} : f32\n"
            "  %16 = splat %15 : tile<256xf32>\n"
            "  %17 = load %14, %7, %16 : tile<256xf32>\n"
            "  %18 = add %12, %17 : tile<256xf32>\n"
            "  %19 = splat %out : tile<256xptr<f32>>\n"
            "  %20 = ptr_add %19, %5 : tile<256xptr<f32>>\n"
            "  store %20, %18, %7\n"
            "}\n");
}

// i8 and u8 in every type form, with constants at the ends of their ranges.
TEST(RoundTrip, EightBitIntegers) {
  const std::string text =
      "tile.kernel @bytes(%x: ptr<i8> {access = \"read\"}, %y: ptr<u8> {access = \"write\"}) {\n"
      "  %0 = arange {end = 16, start = 0} : tile<16xi32>\n"
      "  %1 = splat %x : tile<16xptr<i8>>\n"
      "  %2 = ptr_add %1, %0 : tile<16xptr<i8>>\n"
      "  %3 = load %2 : tile<16xi8>\n"
      "  %4 = constant {value = -128} : i8\n"
      "  %5 = splat %4 : tile<16xi8>\n"
      "  %6 = add %3, %5 : tile<16xi8>\n"
      "  %7 = cast %6 : tile<16xu8>\n"
      "  %8 = constant {value = 255} : u8\n"
      "  %9 = splat %8 : tile<16xu8>\n"
      "  %10 = xor %7, %9 : tile<16xu8>\n"
      "  %11 = splat %y : tile<16xptr<u8>>\n"
      "  %12 = ptr_add %11, %0 : tile<16xptr<u8>>\n"
      "  store %12, %10\n"
      "}\n";
  const Kernel k = parse(text);
  EXPECT_EQ(print(k), text);
  expect_round_trip(k);
  EXPECT_EQ(k.type(k.params[0].value), Type::ptr(DType::i8));
  EXPECT_EQ(k.type(k.params[1].value), Type::ptr(DType::u8));
  for (const char* type :
       {"i8", "u8", "ptr<i8>", "tile<4x8xu8>", "vec<4xi8>", "ptr<u8, threadgroup>"})
    EXPECT_EQ(parse_type(type)->str(), type);
  EXPECT_EQ(parse_dtype("i8"), DType::i8);
  EXPECT_EQ(parse_dtype("u8"), DType::u8);
  EXPECT_EQ(dtype_bytes(DType::i8), 1);
  EXPECT_EQ(dtype_bytes(DType::u8), 1);
  EXPECT_TRUE(is_integer(DType::i8) && is_signed(DType::i8));
  EXPECT_TRUE(is_integer(DType::u8) && !is_signed(DType::u8));
  EXPECT_EQ(integer_range(DType::i8).min, -128);
  EXPECT_EQ(integer_range(DType::u8).max, 255);
}

// The fp8 formats, the 16-bit integers and f64 in every type form; an fp8 constant keeps the
// number it was written with (its byte is the emitters' business).
TEST(RoundTrip, Fp8SixteenBitAndDouble) {
  const std::string text =
      "tile.kernel @narrow(%x: ptr<f8e4m3> {access = \"read\"}, %y: ptr<f64> {access = "
      "\"write\"}) {\n"
      "  %0 = arange {end = 16, start = 0} : tile<16xi32>\n"
      "  %1 = splat %x : tile<16xptr<f8e4m3>>\n"
      "  %2 = ptr_add %1, %0 : tile<16xptr<f8e4m3>>\n"
      "  %3 = constant {value = -1.5} : f8e4m3\n"
      "  %4 = splat %3 : tile<16xf8e4m3>\n"
      "  %5 = cmp %0, %0 {pred = \"eq\"} : tile<16xi1>\n"
      "  %6 = load %2, %5, %4 : tile<16xf8e4m3>\n"
      "  %7 = cast %6 : tile<16xf8e5m2>\n"
      "  %8 = cast %7 : tile<16xf64>\n"
      "  %9 = cast %0 : tile<16xi16>\n"
      "  %10 = cast %9 : tile<16xu16>\n"
      "  %11 = cast %10 : tile<16xf64>\n"
      "  %12 = add %8, %11 : tile<16xf64>\n"
      "  %13 = splat %y : tile<16xptr<f64>>\n"
      "  %14 = ptr_add %13, %0 : tile<16xptr<f64>>\n"
      "  store %14, %12\n"
      "}\n";
  const Kernel k = parse(text);
  EXPECT_EQ(print(k), text);
  expect_round_trip(k);
  for (const char* type : {"f8e4m3", "f8e5m2", "i16", "u16", "f64", "ptr<f8e5m2>", "tile<4x8xi16>",
                           "vec<4xu16>", "ptr<f64, threadgroup>"})
    EXPECT_EQ(parse_type(type)->str(), type);
  EXPECT_EQ(dtype_bytes(DType::f8e4m3), 1);
  EXPECT_EQ(dtype_bytes(DType::i16), 2);
  EXPECT_EQ(dtype_bytes(DType::f64), 8);
  EXPECT_TRUE(is_float(DType::f8e5m2) && is_fp8(DType::f8e5m2) && !is_fp8(DType::f16));
  EXPECT_TRUE(is_float(DType::f64) && !is_integer(DType::f64));
  EXPECT_TRUE(is_integer(DType::i16) && is_signed(DType::i16) && !is_signed(DType::u16));
  EXPECT_EQ(integer_range(DType::i16).min, -32768);
  EXPECT_EQ(integer_range(DType::u16).max, 65535);
}

TEST(Printer, RegionsShowArgumentsAndElse) {
  const std::string text = print(samples::if_with_results());
  EXPECT_NE(text.find("%3, %4 = if %2 : f32, i32 {\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  } else {\n"), std::string::npos) << text;
  const std::string loop = print(samples::softmax_like());
  EXPECT_NE(loop.find("= for %"), std::string::npos) << loop;
  EXPECT_NE(loop.find("  ^(%"), std::string::npos) << loop;
}

// Every float a constant may hold reads back bit for bit.
TEST(RoundTrip, FloatAttributesAreExact) {
  const double values[] = {0.1,
                           -0.0,
                           1e38,
                           -1e38,
                           1.0 / 3.0,
                           3.4028234663852886e38,
                           1e-45,
                           2.5,
                           1.0,
                           -7.0,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::nan("")};
  Kernel k;
  k.name = "floats";
  TileBuilder b(k);
  for (double v : values) b.constant(v, DType::f32);
  Kernel parsed = parse(print(k));
  ASSERT_EQ(parsed.body.ops.size(), std::size(values));
  for (size_t i = 0; i < std::size(values); ++i) {
    double got = std::get<double>(parsed.body.ops[i].attrs.at("value"));
    EXPECT_EQ(std::memcmp(&got, &values[i], sizeof got), 0) << print_attr(values[i]);
  }
  EXPECT_EQ(print(parsed), print(k));
}

TEST(RoundTrip, AttributeKinds) {
  Kernel k;
  k.name = "attrs";
  k.attrs = {{"list", std::vector<int64_t>{1, -2, 3}},
             {"empty", std::vector<int64_t>{}},
             {"dtype", DType::bf16},
             {"text", std::string("quote \" backslash \\ newline \n tab \t bell \x07")},
             {"big", int64_t{-9223372036854775807LL}},
             {"flag", int64_t{1}}};
  const std::string text = print(k);
  EXPECT_NE(text.find("list = [1, -2, 3]"), std::string::npos) << text;
  EXPECT_NE(text.find("dtype = bf16"), std::string::npos) << text;
  Kernel parsed = parse(text);
  EXPECT_EQ(parsed.attrs, k.attrs);
  EXPECT_EQ(print(parsed), text);
}

TEST(RoundTrip, UnusualNamesAndLocations) {
  Kernel k;
  k.name = "has space";
  TileBuilder b(k);
  ValueId p = b.add_param("my buffer", Type::ptr(DType::f32), "read");
  b.add_param("dup", Type::scalar(DType::i32));
  b.add_param("dup", Type::scalar(DType::i32));
  b.add_param("", Type::scalar(DType::f32));
  b.set_location({"kernels/demo.py", 42});
  b.load(p);
  const std::string text = print(k);
  EXPECT_NE(text.find("@\"has space\"(%0: ptr<f32> {access = \"read\", name = \"my buffer\"}, "
                      "%dup: i32, %1: i32 {name = \"dup\"}, %2: f32)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("loc(\"kernels/demo.py\":42)"), std::string::npos) << text;
  Kernel parsed = parse(text);
  EXPECT_EQ(print(parsed), text);
  EXPECT_EQ(parsed.params[0].name, "my buffer");
  EXPECT_EQ(parsed.params[2].name, "dup");
  EXPECT_EQ(parsed.params[3].name, "");
  EXPECT_EQ(parsed.body.ops[0].loc.str(), "kernels/demo.py:42");
}

TEST(Parser, AcceptsCommentsAndFreeSpacing) {
  const std::string text =
      "// leading comment\n"
      "metal.kernel @k(%a: ptr<f32, threadgroup> {access = \"read\"})  // trailing\n"
      "    attributes {threadgroup_bytes = 16, threads_per_threadgroup = 32} {\n"
      "  %v = constant {value = 1.5} : f32   // named values are renumbered\n"
      "  barrier {mem = \"none\", scope = \"simdgroup\"}\n"
      "  %w = add %v, %v : f32\n"
      "}\n";
  Kernel k = parse(text);
  EXPECT_EQ(k.dialect, Dialect::Metal);
  EXPECT_EQ(print(k),
            "metal.kernel @k(%a: ptr<f32, threadgroup> {access = \"read\"}) attributes "
            "{threadgroup_bytes = 16, threads_per_threadgroup = 32} {\n"
            "  %0 = constant {value = 1.5} : f32\n"
            "  barrier {mem = \"none\", scope = \"simdgroup\"}\n"
            "  %1 = add %0, %0 : f32\n"
            "}\n");
}

TEST(Parser, OperandlessOpDoesNotTakeTheNextLine) {
  Kernel k = parse(
      "metal.kernel @k() attributes {threadgroup_bytes = 0, threads_per_threadgroup = 32} {\n"
      "  %0 = simd_lane : i32\n"
      "  for %0, %0, %0 {\n"
      "  ^(%1: i32):\n"
      "    yield\n"
      "  }\n"
      "}\n");
  ASSERT_EQ(k.body.ops.size(), 2u);
  EXPECT_EQ(k.body.ops[1].regions[0].ops.size(), 1u);
}

}  // namespace
}  // namespace metile::ir
