// Malformed text is a UserError "file:line:col: message".
#include <gtest/gtest.h>

#include "metile/ir/parser.h"

namespace metile::ir {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse(text, "bad.ir");
  } catch (const UserError& e) {
    return e.what();
  }
  return "(parsed)";
}

const std::string kHeader = "tile.kernel @k(%x: ptr<f32> {access = \"read\"}, %n: i32) {\n";

TEST(ParserErrors, UndefinedValue) {
  EXPECT_EQ(parse_error(kHeader + "  %0 = add %n, %9 : i32\n}\n"),
            "bad.ir:2:16: use of undefined value %9");
}

TEST(ParserErrors, UnknownOp) {
  EXPECT_EQ(
      parse_error(kHeader + "  %0 = program_id {axis = 0} : i32\n  %1 = frobnicate %0 : i32\n}\n"),
      "bad.ir:3:8: unknown op 'frobnicate'");
}

TEST(ParserErrors, MalformedType) {
  EXPECT_EQ(parse_error(kHeader + "  %0 = program_id {axis = 0} : tile<3yf32>\n}\n"),
            "bad.ir:2:32: malformed type 'tile<3yf32>'");
}

TEST(ParserErrors, ResultAndTypeCountsDiffer) {
  EXPECT_EQ(parse_error(kHeader + "  %0, %1 = program_id {axis = 0} : i32\n}\n"),
            "bad.ir:2:3: program_id defines 2 result(s) but lists 1 type(s)");
}

TEST(ParserErrors, Redefinition) {
  EXPECT_EQ(parse_error(kHeader + "  %n = program_id {axis = 0} : i32\n}\n"),
            "bad.ir:2:3: value %n is defined twice");
}

TEST(ParserErrors, MissingClosingBrace) {
  EXPECT_EQ(parse_error(kHeader + "  %0 = program_id {axis = 0} : i32\n"),
            "bad.ir:3:1: expected '}' before the end of the input");
}

TEST(ParserErrors, BadHeader) {
  EXPECT_EQ(parse_error("// only a comment\ncuda.kernel @k() {\n}\n"),
            "bad.ir:2:1: expected 'tile.kernel' or 'metal.kernel', got 'cuda.kernel'");
}

TEST(ParserErrors, BadAttributeValue) {
  EXPECT_EQ(parse_error(kHeader + "  %0 = program_id {axis = zero} : i32\n}\n"),
            "bad.ir:2:27: expected an attribute value (number, string, dtype, [list] or "
            "#layout<...>), got "
            "'zero'");
  EXPECT_EQ(parse_error(kHeader + "  %0 = program_id {axis = 1.2.3} : i32\n}\n"),
            "bad.ir:2:27: malformed number '1.2.3'");
  EXPECT_EQ(parse_error(kHeader + "  %0 = program_id {axis = 0, axis = 1} : i32\n}\n"),
            "bad.ir:2:30: attribute 'axis' is given twice");
}

TEST(ParserErrors, UnterminatedString) {
  EXPECT_EQ(parse_error("tile.kernel @k(%x: ptr<f32> {access = \"read}) {\n}\n"),
            "bad.ir:1:39: unterminated string");
}

TEST(ParserErrors, TrailingText) {
  EXPECT_EQ(parse_error(kHeader + "}\nextra\n"),
            "bad.ir:3:1: expected the end of the input after the kernel");
}

TEST(ParserErrors, BadParameterAttribute) {
  EXPECT_EQ(parse_error("tile.kernel @k(%x: ptr<f32> {mode = \"read\"}) {\n}\n"),
            "bad.ir:1:29: parameter attributes are access = \"...\", name = \"...\" and "
            "divisibility = N, got mode");
}

}  // namespace
}  // namespace metile::ir
