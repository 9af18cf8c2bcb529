// The expression language of reduction laws: variables, constants (+inf and -inf included),
// + - * /, max, min, exp, log, comparisons, select, and reductions over a list (for a law's
// reference computation). The op list is law_exprs.def.
//
// An Expr is an immutable tree shared by value. Names: a merge reads a.<component> and
// b.<component>, a finalisation reads the state components by name, a lift and the list
// reductions of a reference read the element components by name.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace metile::discovery {

enum class ExprKind : uint8_t {
#define LAW_EXPR(kind, name, arity, doc) kind,
#include "metile/discovery/law_exprs.def"
};

std::string_view expr_kind_name(ExprKind kind);  // "list_sum"
int expr_arity(ExprKind kind);
bool is_list_reduction(ExprKind kind);

class Expr {
 public:
  static Expr var(std::string name);
  static Expr constant(double value);
  // Throws UserError when the operand count does not match the kind's arity.
  static Expr make(ExprKind kind, std::vector<Expr> operands);

  ExprKind kind() const;
  const std::string& name() const;  // Var only
  double value() const;             // Const only
  const std::vector<Expr>& operands() const;

  // Readable text: "max(a.m, b.m)", "a.d * exp(a.m - m)", "-inf".
  std::string str() const;
  // Variables read outside any list reduction, sorted.
  std::vector<std::string> free_variables() const;
  bool has_list_reduction() const;

 private:
  struct Node;
  explicit Expr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr exp(const Expr& a);
Expr log(const Expr& a);
Expr less(const Expr& a, const Expr& b);
Expr equal(const Expr& a, const Expr& b);
Expr select(const Expr& condition, const Expr& if_true, const Expr& if_false);
Expr list_sum(const Expr& body);
Expr list_max(const Expr& body);
Expr list_min(const Expr& body);

// Bindings for evaluation: variable values, and the list a list reduction iterates, one map of
// element components per element.
struct Env {
  std::map<std::string, double> vars;
  std::vector<std::map<std::string, double>> list;
};

// A constant as the text form writes it: 17 significant digits, "inf" and "-inf"; it parses
// back to the same double.
std::string number_text(double v);

// Evaluates in double precision. Inside a list reduction the element's components shadow
// the outer variables. Throws InternalError on an unbound variable (laws are checked for
// that before they are evaluated).
double evaluate(const Expr& e, const Env& env);

}  // namespace metile::discovery
