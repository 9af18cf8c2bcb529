#include "metile/discovery/expr.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <sstream>

#include "metile/support/errors.h"

namespace metile::discovery {

struct Expr::Node {
  ExprKind kind = ExprKind::Const;
  std::string name;
  double value = 0;
  std::vector<Expr> operands;
};

std::string_view expr_kind_name(ExprKind kind) {
  switch (kind) {
#define LAW_EXPR(k, name, arity, doc) \
  case ExprKind::k:                   \
    return name;
#include "metile/discovery/law_exprs.def"
  }
  throw InternalError("expr_kind_name: unknown kind");
}

int expr_arity(ExprKind kind) {
  switch (kind) {
#define LAW_EXPR(k, name, arity, doc) \
  case ExprKind::k:                   \
    return arity;
#include "metile/discovery/law_exprs.def"
  }
  throw InternalError("expr_arity: unknown kind");
}

bool is_list_reduction(ExprKind kind) {
  return kind == ExprKind::ListSum || kind == ExprKind::ListMax || kind == ExprKind::ListMin;
}

Expr Expr::var(std::string name) {
  if (name.empty()) throw UserError("reduction law: a variable needs a name");
  auto n = std::make_shared<Node>();
  n->kind = ExprKind::Var;
  n->name = std::move(name);
  return Expr(std::move(n));
}

Expr Expr::constant(double value) {
  if (std::isnan(value)) throw UserError("reduction law: a constant may not be NaN");
  auto n = std::make_shared<Node>();
  n->kind = ExprKind::Const;
  n->value = value;
  return Expr(std::move(n));
}

Expr Expr::make(ExprKind kind, std::vector<Expr> operands) {
  if (kind == ExprKind::Var || kind == ExprKind::Const)
    throw UserError("reduction law: " + std::string(expr_kind_name(kind)) +
                    " is made with Expr::var or Expr::constant");
  if (static_cast<int>(operands.size()) != expr_arity(kind))
    throw UserError("reduction law: " + std::string(expr_kind_name(kind)) + " takes " +
                    std::to_string(expr_arity(kind)) + " operands, got " +
                    std::to_string(operands.size()));
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->operands = std::move(operands);
  return Expr(std::move(n));
}

ExprKind Expr::kind() const {
  return node_->kind;
}
const std::string& Expr::name() const {
  METILE_ASSERT(node_->kind == ExprKind::Var, "name() of a non-variable");
  return node_->name;
}
double Expr::value() const {
  METILE_ASSERT(node_->kind == ExprKind::Const, "value() of a non-constant");
  return node_->value;
}
const std::vector<Expr>& Expr::operands() const {
  return node_->operands;
}

std::string number_text(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

namespace {

// Binding strength for printing: sums 1, products 2, everything else is atomic.
int precedence(ExprKind kind) {
  switch (kind) {
    case ExprKind::Add:
    case ExprKind::Sub:
      return 1;
    case ExprKind::Mul:
    case ExprKind::Div:
      return 2;
    case ExprKind::Var:
    case ExprKind::Const:
    case ExprKind::Max:
    case ExprKind::Min:
    case ExprKind::Exp:
    case ExprKind::Log:
    case ExprKind::Less:
    case ExprKind::Equal:
    case ExprKind::Select:
    case ExprKind::ListSum:
    case ExprKind::ListMax:
    case ExprKind::ListMin:
      return 3;
  }
  return 3;
}

std::string infix(const Expr& e, const char* op) {
  int p = precedence(e.kind());
  const Expr& l = e.operands()[0];
  const Expr& r = e.operands()[1];
  // Left-associative: the right operand of - and / needs parentheses at equal strength.
  bool right_strict = e.kind() == ExprKind::Sub || e.kind() == ExprKind::Div;
  std::string ls = precedence(l.kind()) < p ? "(" + l.str() + ")" : l.str();
  bool wrap_r = precedence(r.kind()) < p || (right_strict && precedence(r.kind()) == p);
  std::string rs = wrap_r ? "(" + r.str() + ")" : r.str();
  return ls + " " + op + " " + rs;
}

void collect_free(const Expr& e, std::set<std::string>& out) {
  if (e.kind() == ExprKind::Var) out.insert(e.name());
  if (is_list_reduction(e.kind())) return;
  for (const Expr& o : e.operands()) collect_free(o, out);
}

}  // namespace

std::string Expr::str() const {
  switch (kind()) {
    case ExprKind::Var:
      return name();
    case ExprKind::Const:
      return number_text(value());
    case ExprKind::Add:
      return infix(*this, "+");
    case ExprKind::Sub:
      return infix(*this, "-");
    case ExprKind::Mul:
      return infix(*this, "*");
    case ExprKind::Div:
      return infix(*this, "/");
    case ExprKind::Less:
    case ExprKind::Equal:
    case ExprKind::Max:
    case ExprKind::Min:
    case ExprKind::Exp:
    case ExprKind::Log:
    case ExprKind::Select:
    case ExprKind::ListSum:
    case ExprKind::ListMax:
    case ExprKind::ListMin: {
      std::string s = std::string(expr_kind_name(kind())) + "(";
      for (size_t i = 0; i < operands().size(); ++i) s += (i ? ", " : "") + operands()[i].str();
      return s + ")";
    }
  }
  return "?";
}

std::vector<std::string> Expr::free_variables() const {
  std::set<std::string> names;
  collect_free(*this, names);
  return {names.begin(), names.end()};
}

bool Expr::has_list_reduction() const {
  if (is_list_reduction(kind())) return true;
  return std::any_of(operands().begin(), operands().end(),
                     [](const Expr& o) { return o.has_list_reduction(); });
}

Expr operator+(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Add, {a, b});
}
Expr operator-(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Sub, {a, b});
}
Expr operator*(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Mul, {a, b});
}
Expr operator/(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Div, {a, b});
}
Expr max(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Max, {a, b});
}
Expr min(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Min, {a, b});
}
Expr exp(const Expr& a) {
  return Expr::make(ExprKind::Exp, {a});
}
Expr log(const Expr& a) {
  return Expr::make(ExprKind::Log, {a});
}
Expr less(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Less, {a, b});
}
Expr equal(const Expr& a, const Expr& b) {
  return Expr::make(ExprKind::Equal, {a, b});
}
Expr select(const Expr& condition, const Expr& if_true, const Expr& if_false) {
  return Expr::make(ExprKind::Select, {condition, if_true, if_false});
}
Expr list_sum(const Expr& body) {
  return Expr::make(ExprKind::ListSum, {body});
}
Expr list_max(const Expr& body) {
  return Expr::make(ExprKind::ListMax, {body});
}
Expr list_min(const Expr& body) {
  return Expr::make(ExprKind::ListMin, {body});
}

namespace {

double reduce_list(const Expr& e, const Env& env) {
  double acc = e.kind() == ExprKind::ListSum   ? 0.0
               : e.kind() == ExprKind::ListMax ? -std::numeric_limits<double>::infinity()
                                               : std::numeric_limits<double>::infinity();
  for (const auto& element : env.list) {
    Env inner = env;
    for (const auto& [name, v] : element) inner.vars[name] = v;
    double x = evaluate(e.operands()[0], inner);
    if (e.kind() == ExprKind::ListSum)
      acc += x;
    else if (e.kind() == ExprKind::ListMax)
      acc = std::isnan(x) ? x : std::max(acc, x);
    else
      acc = std::isnan(x) ? x : std::min(acc, x);
  }
  return acc;
}

// max and min that propagate NaN, as the comparison-based GPU forms do not promise otherwise.
double nan_max(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::max(a, b);
}
double nan_min(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<double>::quiet_NaN() : std::min(a, b);
}

}  // namespace

double evaluate(const Expr& e, const Env& env) {
  auto arg = [&](int i) { return evaluate(e.operands()[i], env); };
  switch (e.kind()) {
    case ExprKind::Var: {
      auto it = env.vars.find(e.name());
      METILE_ASSERT(it != env.vars.end(), "reduction law: unbound variable " + e.name());
      return it->second;
    }
    case ExprKind::Const:
      return e.value();
    case ExprKind::Add:
      return arg(0) + arg(1);
    case ExprKind::Sub:
      return arg(0) - arg(1);
    case ExprKind::Mul:
      return arg(0) * arg(1);
    case ExprKind::Div:
      return arg(0) / arg(1);
    case ExprKind::Max:
      return nan_max(arg(0), arg(1));
    case ExprKind::Min:
      return nan_min(arg(0), arg(1));
    case ExprKind::Exp:
      return std::exp(arg(0));
    case ExprKind::Log:
      return std::log(arg(0));
    case ExprKind::Less:
      return arg(0) < arg(1) ? 1.0 : 0.0;
    case ExprKind::Equal:
      return arg(0) == arg(1) ? 1.0 : 0.0;
    case ExprKind::Select:
      return arg(0) != 0.0 ? arg(1) : arg(2);
    case ExprKind::ListSum:
    case ExprKind::ListMax:
    case ExprKind::ListMin:
      return reduce_list(e, env);
  }
  throw InternalError("evaluate: unknown expression kind");
}

}  // namespace metile::discovery
