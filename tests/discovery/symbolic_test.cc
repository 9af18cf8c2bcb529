#include "metile/discovery/symbolic.h"

#include <gtest/gtest.h>

#include <limits>

namespace metile::discovery {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
Expr v(const char* n) {
  return Expr::var(n);
}

TEST(NormalForm, FlattensAndSortsAssociativeCommutativeOps) {
  EXPECT_EQ(normal_form((v("a") + v("b")) + v("c")), normal_form(v("c") + (v("b") + v("a"))));
  EXPECT_EQ(normal_form(max(max(v("a"), v("b")), v("c"))), "max(a, b, c)");
  EXPECT_EQ(normal_form(v("b") * v("a")), normal_form(v("a") * v("b")));
}

TEST(NormalForm, DropsUnitsAndFoldsExtremumConstants) {
  EXPECT_EQ(normal_form(Expr::constant(0) + v("a")), "a");
  EXPECT_EQ(normal_form(Expr::constant(1) * v("a")), "a");
  EXPECT_EQ(normal_form(max(Expr::constant(-kInf), v("a"))), "a");
  EXPECT_EQ(normal_form(min(Expr::constant(kInf), v("a"))), "a");
  EXPECT_EQ(normal_form(max(Expr::constant(kInf), v("a"))), "inf");
  EXPECT_EQ(normal_form(max(v("a"), v("a"))), "a");
  EXPECT_EQ(normal_form(max(Expr::constant(2), max(v("a"), Expr::constant(3)))), "max(3, a)");
}

TEST(NormalForm, RewritesNothingThatIsNotExact) {
  // x - x is NaN at x = inf and x * 0 is NaN at x = inf: neither becomes 0.
  EXPECT_NE(normal_form(v("a") - v("a")), "0");
  EXPECT_NE(normal_form(v("a") * Expr::constant(0)), "0");
  // Subtraction is not associative, and the normal forms say so.
  EXPECT_NE(normal_form((v("a") - v("b")) - v("c")), normal_form(v("a") - (v("b") - v("c"))));
  EXPECT_EQ(normal_form(Expr::constant(0) - (Expr::constant(0) - v("a"))), "a");
}

TEST(Symbolic, ExpandsListReductionsInnermostFirst) {
  std::vector<std::map<std::string, Expr>> list{{{"x", v("p")}}, {{"x", v("q")}}};
  Expr e = list_sum(exp(v("x") - list_max(v("x"))));
  EXPECT_EQ(expand_lists(e, list).str(), "exp(p - max(p, q)) + exp(q - max(p, q))");
  EXPECT_EQ(expand_lists(list_max(v("x")), {}).str(), "-inf");
}

TEST(Symbolic, SubstitutesFreeVariablesAtOnce) {
  Expr e = v("a") + v("b");
  EXPECT_EQ(substitute(e, {{"a", v("b")}, {"b", v("a")}}).str(), "b + a");
}

}  // namespace
}  // namespace metile::discovery
