// The text form of law expressions, as Expr::str prints them:
//   expr    := term (("+" | "-") term)*
//   term    := unary (("*" | "/") unary)*
//   unary   := "-" unary | primary
//   primary := number | "inf" | name | function "(" expr ("," expr)* ")" | "(" expr ")"
// A name is [A-Za-z_][A-Za-z0-9_]* with an optional ".component" (a.m); a function is one of
// law_exprs.def's names (max, exp, select, list_sum, ...). "-c" of a constant is the constant
// -c; "-x" of anything else is 0 - x.
#pragma once

#include <string_view>

#include "metile/discovery/expr.h"

namespace metile::discovery {

// Throws UserError naming the position and what was expected.
Expr parse_expr(std::string_view text);

}  // namespace metile::discovery
