#include "metile/discovery/symbolic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "metile/support/errors.h"

namespace metile::discovery {

Expr substitute(const Expr& e, const std::map<std::string, Expr>& bindings) {
  if (e.kind() == ExprKind::Var) {
    auto it = bindings.find(e.name());
    return it == bindings.end() ? e : it->second;
  }
  if (e.kind() == ExprKind::Const || is_list_reduction(e.kind())) return e;
  std::vector<Expr> operands;
  for (const Expr& o : e.operands()) operands.push_back(substitute(o, bindings));
  return Expr::make(e.kind(), std::move(operands));
}

Expr expand_lists(const Expr& e, const std::vector<std::map<std::string, Expr>>& elements) {
  if (e.kind() == ExprKind::Var || e.kind() == ExprKind::Const) return e;
  std::vector<Expr> operands;
  for (const Expr& o : e.operands()) operands.push_back(expand_lists(o, elements));
  if (!is_list_reduction(e.kind())) return Expr::make(e.kind(), std::move(operands));
  const double inf = std::numeric_limits<double>::infinity();
  ExprKind step = e.kind() == ExprKind::ListSum   ? ExprKind::Add
                  : e.kind() == ExprKind::ListMax ? ExprKind::Max
                                                  : ExprKind::Min;
  if (elements.empty())
    return Expr::constant(step == ExprKind::Add ? 0.0 : step == ExprKind::Max ? -inf : inf);
  // The body's own list reductions are already unrolled, so only element names remain free.
  Expr acc = substitute(operands[0], elements[0]);
  for (size_t i = 1; i < elements.size(); ++i)
    acc = Expr::make(step, {acc, substitute(operands[0], elements[i])});
  return acc;
}

namespace {

struct Norm {
  ExprKind kind = ExprKind::Const;
  double value = 0;
  std::vector<Norm> args;
  std::string text;
};

Norm constant(double v) {
  return Norm{ExprKind::Const, v, {}, number_text(v)};
}

bool is_constant(const Norm& n, double v) {
  return n.kind == ExprKind::Const && n.value == v;
}

Norm node(ExprKind kind, std::vector<Norm> args, const std::string& separator, bool call) {
  std::string text = call ? std::string(expr_kind_name(kind)) + "(" : "(";
  for (size_t i = 0; i < args.size(); ++i) text += (i ? separator : "") + args[i].text;
  return Norm{kind, 0, std::move(args), text + ")"};
}

void flatten_into(ExprKind kind, Norm n, std::vector<Norm>& out) {
  if (n.kind == kind) {
    for (Norm& a : n.args) out.push_back(std::move(a));
  } else {
    out.push_back(std::move(n));
  }
}

void sort_by_text(std::vector<Norm>& v) {
  std::sort(v.begin(), v.end(), [](const Norm& a, const Norm& b) { return a.text < b.text; });
}

Norm sum_of(std::vector<Norm> parts) {
  std::vector<Norm> terms;
  for (Norm& p : parts) flatten_into(ExprKind::Add, std::move(p), terms);
  std::erase_if(terms, [](const Norm& t) { return is_constant(t, 0.0); });
  if (terms.empty()) return constant(0.0);
  if (terms.size() == 1) return std::move(terms[0]);
  sort_by_text(terms);
  return node(ExprKind::Add, std::move(terms), " + ", false);
}

// Signs fold (-1 * -1 is exact); other constant factors stay, so no rounding is introduced.
Norm product_of(std::vector<Norm> parts) {
  std::vector<Norm> factors;
  for (Norm& p : parts) flatten_into(ExprKind::Mul, std::move(p), factors);
  bool negative = false;
  std::vector<Norm> kept;
  for (Norm& f : factors) {
    if (is_constant(f, 1.0)) continue;
    if (is_constant(f, -1.0)) {
      negative = !negative;
      continue;
    }
    kept.push_back(std::move(f));
  }
  if (kept.empty()) return constant(negative ? -1.0 : 1.0);
  if (kept.size() == 1 && kept[0].kind == ExprKind::Const)
    return constant(negative ? -kept[0].value : kept[0].value);
  sort_by_text(kept);
  if (negative) kept.insert(kept.begin(), constant(-1.0));
  if (kept.size() == 1) return std::move(kept[0]);
  return node(ExprKind::Mul, std::move(kept), " * ", false);
}

Norm extremum_of(ExprKind kind, std::vector<Norm> parts) {
  const double inf = std::numeric_limits<double>::infinity();
  const double unit = kind == ExprKind::Max ? -inf : inf;
  std::vector<Norm> args;
  for (Norm& p : parts) flatten_into(kind, std::move(p), args);
  std::optional<double> folded;
  std::vector<Norm> kept;
  for (Norm& a : args) {
    if (a.kind == ExprKind::Const) {
      folded = !folded                 ? a.value
               : kind == ExprKind::Max ? std::max(*folded, a.value)
                                       : std::min(*folded, a.value);
    } else {
      kept.push_back(std::move(a));
    }
  }
  if (folded && *folded == -unit) return constant(*folded);  // the annihilator
  if (folded && *folded != unit) kept.push_back(constant(*folded));
  sort_by_text(kept);
  kept.erase(std::unique(kept.begin(), kept.end(),
                         [](const Norm& a, const Norm& b) { return a.text == b.text; }),
             kept.end());
  if (kept.empty()) return constant(unit);
  if (kept.size() == 1) return std::move(kept[0]);
  return node(kind, std::move(kept), ", ", true);
}

Norm normalise(const Expr& e) {
  auto arg = [&](int i) { return normalise(e.operands()[i]); };
  switch (e.kind()) {
    case ExprKind::Var:
      return Norm{ExprKind::Var, 0, {}, e.name()};
    case ExprKind::Const:
      return constant(e.value());
    case ExprKind::Add:
      return sum_of({arg(0), arg(1)});
    case ExprKind::Sub:
      return sum_of({arg(0), product_of({constant(-1.0), arg(1)})});
    case ExprKind::Mul:
      return product_of({arg(0), arg(1)});
    case ExprKind::Max:
    case ExprKind::Min:
      return extremum_of(e.kind(), {arg(0), arg(1)});
    case ExprKind::Div:
    case ExprKind::Exp:
    case ExprKind::Log:
    case ExprKind::Less:
    case ExprKind::Equal:
    case ExprKind::Select:
    case ExprKind::ListSum:
    case ExprKind::ListMax:
    case ExprKind::ListMin: {
      std::vector<Norm> args;
      for (size_t i = 0; i < e.operands().size(); ++i) args.push_back(arg(static_cast<int>(i)));
      return node(e.kind(), std::move(args), ", ", true);
    }
  }
  throw InternalError("normal_form: unknown expression kind");
}

}  // namespace

std::string normal_form(const Expr& e) {
  return normalise(e).text;
}

}  // namespace metile::discovery
