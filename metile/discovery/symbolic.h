// The symbolic half of the law checker: substitution, list expansion and a normal form.
//
// normal_form is sound but incomplete: two expressions with the same normal form are equal
// for every binding over the extended reals (no NaN in the inputs), but equal expressions may
// get different normal forms (then the checker falls back to cases). It applies only
// identities that hold exactly:
//   +, *, max, min are flattened, their operands sorted (associativity, commutativity);
//   a - b is a + neg(b), neg(neg(a)) = a, neg(c) folds for a constant c;
//   0 leaves a sum, 1 leaves a product; max and min drop duplicates (idempotence), fold
//   their constants, drop their identity (-inf for max, +inf for min) and are absorbed by
//   their annihilator (+inf for max, -inf for min).
// Nothing else is rewritten: no distribution, no cancellation (x - x is not 0 at x = inf),
// no x * 0 (inf * 0 is NaN), no exp/log identities.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "metile/discovery/expr.h"

namespace metile::discovery {

// Replaces the free variables named in `bindings` (not those inside list reductions, whose
// element names are bound by the list), all at once.
Expr substitute(const Expr& e, const std::map<std::string, Expr>& bindings);

// Replaces every list reduction by its unrolled form over `elements` (element component name
// -> expression, one map per element): list_sum(f) becomes f(x1) + ... + f(xn), and so on;
// over an empty list, the reduction's identity (0, -inf, +inf).
Expr expand_lists(const Expr& e, const std::vector<std::map<std::string, Expr>>& elements);

// The canonical text of `e` under the identities above.
std::string normal_form(const Expr& e);

}  // namespace metile::discovery
