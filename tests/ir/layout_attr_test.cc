// Thread layouts in Tile IR: the #layout<...> attribute (printed, parsed, round-tripped),
// arange {layout} and convert_layout, and the rules the builder and the verifier check.
#include <gtest/gtest.h>

#include "metile/ir/builder.h"
#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"

namespace metile::ir {
namespace {

using Strings = std::vector<std::string>;

const ThreadLayout kTranspose({3, 4, 5, 0, 1, 2});

Strings diagnostics(const std::string& body) {
  Strings r;
  for (const Diagnostic& d : verify(parse("tile.kernel @k() {\n" + body + "}\n")))
    r.push_back(d.str());
  return r;
}

std::string parse_error(const std::string& body) {
  try {
    parse("tile.kernel @k() {\n" + body + "}\n", "bad.ir");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// arange with a layout, then a conversion back to the identity.
Kernel transpose_ownership() {
  Kernel k;
  k.name = "owned";
  TileBuilder b(k);
  const ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  const ValueId owned = b.arange(0, 64, kTranspose);
  const ValueId back = b.convert_layout(owned, ThreadLayout::identity(64));
  b.store(b.ptr_add(b.splat(out, {64}), owned), back);
  return k;
}

TEST(LayoutAttr, PrintsEveryField) {
  EXPECT_EQ(print_attr(kTranspose), "#layout<(3, 4, 5, 0, 1, 2), xor 0, ept 1>");
  EXPECT_EQ(print_attr(ThreadLayout({1, 0, 2}, 5, 2)), "#layout<(1, 0, 2), xor 5, ept 2>");
  EXPECT_EQ(print_attr(ThreadLayout({0})), "#layout<(0), xor 0, ept 1>");
  EXPECT_EQ(print_attr(ThreadLayout::identity(1)), "#layout<(), xor 0, ept 1>");
}

TEST(LayoutAttr, KernelRoundTrips) {
  const Kernel k = transpose_ownership();
  ASSERT_TRUE(verify(k).empty()) << print(k);
  const std::string text = print(k);
  EXPECT_NE(text.find("arange {end = 64, layout = #layout<(3, 4, 5, 0, 1, 2), xor 0, ept 1>, "
                      "start = 0}"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("convert_layout %"), std::string::npos) << text;
  const Kernel parsed = parse(text);
  EXPECT_EQ(print(parsed), text);
  EXPECT_TRUE(verify(parsed).empty());
  EXPECT_EQ(*parsed.body.ops[0].layout_attr("layout"), kTranspose);
}

TEST(LayoutAttr, ParsedLayoutsKeepXorAndRegisters) {
  const Kernel k = parse(
      "tile.kernel @k() {\n"
      "  %0 = arange {end = 128, start = 0, layout = #layout< ( 5,6,0,1,2,3,4 ) , xor 3, ept 4>}"
      " : tile<128xi32>\n}\n");
  const ThreadLayout* layout = k.body.ops[0].layout_attr("layout");
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(*layout, ThreadLayout({5, 6, 0, 1, 2, 3, 4}, 3, 4));
  EXPECT_EQ(layout->thread_count(), 32);
}

TEST(LayoutAttr, MalformedLayoutsAreParseErrors) {
  const std::string op = "  %0 = arange {end = 4, start = 0, layout = ";
  EXPECT_EQ(parse_error(op + "#layout<(0, 1), ept 1>} : tile<4xi32>\n"),
            "bad.ir:2:61: expected 'xor' in a #layout");
  EXPECT_EQ(parse_error(op + "#layout<(0, 1), xor 0>} : tile<4xi32>\n"),
            "bad.ir:2:66: expected ','");
  EXPECT_EQ(parse_error(op + "#layout<(0, 1.5), xor 0, ept 1>} : tile<4xi32>\n"),
            "bad.ir:2:57: expected a bit position, an integer");
  EXPECT_EQ(parse_error(op + "#layout<(-1, 0), xor 0, ept 1>} : tile<4xi32>\n"),
            "bad.ir:2:54: bit position -1 is negative or too large");
  EXPECT_EQ(parse_error(op + "#grid<(0, 1), xor 0, ept 1>} : tile<4xi32>\n"),
            "bad.ir:2:45: expected #layout<(bits), xor N, ept N>");
}

TEST(LayoutAttr, NonBijectionsAreParseErrorsAtTheLayout) {
  const std::string op = "  %0 = arange {end = 4, start = 0, layout = ";
  EXPECT_EQ(parse_error(op + "#layout<(0, 0), xor 0, ept 1>} : tile<4xi32>\n"),
            "bad.ir:2:45: ThreadLayout: bit_order must be a permutation of 0..2 - 1, but entry 0 "
            "is out of range or repeated");
  EXPECT_EQ(parse_error(op + "#layout<(0, 1), xor 4, ept 1>} : tile<4xi32>\n"),
            "bad.ir:2:45: ThreadLayout: xor_mask 4 must lie in [0, 4)");
  EXPECT_EQ(parse_error(op + "#layout<(0, 1), xor 0, ept 3>} : tile<4xi32>\n"),
            "bad.ir:2:45: ThreadLayout: elements_per_thread 3 must be a power of two no larger "
            "than the size 4");
}

TEST(LayoutAttr, VerifierChecksTheLayoutCoversTheTile) {
  EXPECT_EQ(diagnostics("  %0 = arange {end = 8, start = 0, layout = #layout<(0, 1), xor 0, ept 1>}"
                        " : tile<8xi32>\n"),
            Strings{"arange: the layout identity(4 elements, 4 threads, 1 per thread) has 4 "
                    "elements but the tile has 8 (%0: tile<8xi32>)"});
  EXPECT_EQ(diagnostics("  %0 = arange {end = 8, start = 0} : tile<8xi32>\n"
                        "  %1 = convert_layout %0 {layout = #layout<(1, 0), xor 0, ept 1>}"
                        " : tile<8xi32>\n"),
            Strings{"convert_layout: the layout ThreadLayout((1, 0), xor 0, 4 threads, 1 per "
                    "thread) has 4 elements but the tile has 8 (%1: tile<8xi32>)"});
}

TEST(LayoutAttr, VerifierChecksConvertLayoutTypes) {
  const std::string layout = "{layout = #layout<(1, 0), xor 0, ept 1>}";
  EXPECT_EQ(diagnostics("  %0 = arange {end = 4, start = 0} : tile<4xi32>\n"
                        "  %1 = convert_layout %0 " +
                        layout + " : tile<4xf32>\n"),
            Strings{"convert_layout: the result must have the operand's type (%0: tile<4xi32>, "
                    "%1: tile<4xf32>)"});
  EXPECT_EQ(diagnostics("  %0 = constant {value = 1} : i32\n"
                        "  %1 = convert_layout %0 " +
                        layout + " : i32\n"),
            Strings{"convert_layout: the operand must be a tile (%0: i32)"});
  EXPECT_EQ(diagnostics("  %0 = arange {end = 4, start = 0} : tile<4xi32>\n"
                        "  %1 = convert_layout %0 {layout = 3} : tile<4xi32>\n"),
            Strings{"convert_layout: needs a layout attribute layout (#layout<...>)"});
  EXPECT_EQ(diagnostics("  %0 = arange {end = 4, start = 0} : tile<4xi32>\n"
                        "  %1 = convert_layout %0 : tile<4xi32>\n"),
            Strings{"convert_layout: needs a layout attribute layout (#layout<...>)"});
}

TEST(LayoutAttr, BuilderRejectsAMismatchedSize) {
  Kernel k;
  k.name = "k";
  TileBuilder b(k);
  try {
    b.arange(0, 32, ThreadLayout::identity(64));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.rule(),
              "arange: the layout identity(64 elements, 64 threads, 1 per thread) owns 64 elements "
              "but the tile has end - start = 32");
  }
  const ValueId t = b.arange(0, 32);
  try {
    b.convert_layout(t, kTranspose);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.rule(),
              "convert_layout: the layout ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 threads, 1 "
              "per thread) owns 64 elements but %0: tile<32xi32> has 32");
  }
  try {
    b.convert_layout(b.constant_int(1), kTranspose);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.rule(), "convert_layout: the operand must be a tile, got %1: i32");
  }
}

}  // namespace
}  // namespace metile::ir
