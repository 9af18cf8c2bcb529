// The built-in laws (reduction_law.h, namespace laws).
#include <limits>

#include "metile/discovery/reduction_law.h"

namespace metile::discovery::laws {

namespace {
const double kInf = std::numeric_limits<double>::infinity();

Expr v(const char* name) {
  return Expr::var(name);
}
Expr c(double value) {
  return Expr::constant(value);
}

// The factor that moves a part summarised at maximum `part` to the merged maximum `merged`:
// exp(part - merged), and exactly 1 when they are equal, so that two empty (-inf) parts
// merge to an empty part instead of exp(-inf - -inf) = NaN.
Expr rescale(const Expr& part, const Expr& merged) {
  return select(equal(part, merged), c(1), exp(part - merged));
}

ReductionLaw single(const char* name, Domain domain, double identity, Expr merge, Expr reference) {
  return ReductionLaw{name,     {"s"},    {{"x", domain}},       {c(identity)}, {std::move(merge)},
                      {v("x")}, {v("s")}, {std::move(reference)}};
}
}  // namespace

ReductionLaw sum() {
  return single("sum", Domain::Finite, 0.0, v("a.s") + v("b.s"), list_sum(v("x")));
}

ReductionLaw max() {
  return single("max", Domain::Extended, -kInf, metile::discovery::max(v("a.s"), v("b.s")),
                list_max(v("x")));
}

ReductionLaw min() {
  return single("min", Domain::Extended, kInf, metile::discovery::min(v("a.s"), v("b.s")),
                list_min(v("x")));
}

ReductionLaw online_softmax() {
  Expr m = metile::discovery::max(v("a.m"), v("b.m"));
  Expr d = v("a.d") * rescale(v("a.m"), m) + v("b.d") * rescale(v("b.m"), m);
  Expr row_max = list_max(v("x"));
  return ReductionLaw{"online_softmax",
                      {"m", "d"},
                      {{"x", Domain::FiniteOrNegInf}},
                      {c(-kInf), c(0)},
                      {m, d},
                      {v("x"), c(1)},
                      {v("m"), v("d")},
                      {row_max, list_sum(exp(v("x") - row_max))}};
}

ReductionLaw log_sum_exp() {
  ReductionLaw law = online_softmax();
  law.name = "log_sum_exp";
  Expr row_max = list_max(v("x"));
  law.finalise = {v("m") + log(v("d"))};
  law.reference = {row_max + log(list_sum(exp(v("x") - row_max)))};
  return law;
}

ReductionLaw weighted_softmax() {
  Expr m = metile::discovery::max(v("a.m"), v("b.m"));
  Expr ra = rescale(v("a.m"), m), rb = rescale(v("b.m"), m);
  Expr weight = exp(v("s") - list_max(v("s")));
  return ReductionLaw{"weighted_softmax",
                      {"m", "d", "n"},
                      {{"s", Domain::FiniteOrNegInf}, {"v", Domain::Finite}},
                      {c(-kInf), c(0), c(0)},
                      {m, v("a.d") * ra + v("b.d") * rb, v("a.n") * ra + v("b.n") * rb},
                      {v("s"), c(1), v("v")},
                      {v("n") / v("d")},
                      {list_sum(weight * v("v")) / list_sum(weight)}};
}

std::vector<ReductionLaw> all() {
  return {sum(), max(), min(), online_softmax(), log_sum_exp(), weighted_softmax()};
}

}  // namespace metile::discovery::laws
