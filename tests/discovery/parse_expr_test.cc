#include "metile/discovery/parse_expr.h"

#include <gtest/gtest.h>

#include "metile/discovery/reduction_law.h"
#include "metile/support/errors.h"

namespace metile::discovery {
namespace {

std::string error_of(const char* text) {
  try {
    parse_expr(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ParseExpr, ReadsWhatStrPrints) {
  for (const ReductionLaw& law : laws::all())
    for (const auto* field : {&law.identity, &law.merge, &law.lift, &law.finalise, &law.reference})
      for (const Expr& e : *field) EXPECT_EQ(parse_expr(e.str()).str(), e.str());
}

TEST(ParseExpr, PrecedenceAndAssociativity) {
  EXPECT_EQ(parse_expr("a - b - c").str(), "a - b - c");
  EXPECT_EQ(parse_expr("a - (b - c)").str(), "a - (b - c)");
  EXPECT_EQ(parse_expr("a + b * c").operands()[1].str(), "b * c");
  EXPECT_EQ(parse_expr("-inf").value(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_expr("2.5e-3").value(), 2.5e-3);
  EXPECT_EQ(parse_expr("-x").str(), "0 - x");
}

TEST(ParseExpr, ErrorsNameTheColumn) {
  EXPECT_EQ(error_of("max(a.m)"),
            "law expression 'max(a.m)': max takes 2 operands, got 1 at column 9");
  EXPECT_EQ(error_of("a +"), "law expression 'a +': expected an expression at column 4");
  EXPECT_EQ(error_of("sqrt(x)"), "law expression 'sqrt(x)': unknown function 'sqrt' at column 6");
  EXPECT_EQ(error_of("a b"), "law expression 'a b': unexpected 'b' at column 3");
}

}  // namespace
}  // namespace metile::discovery
