#include "metile/discovery/parse_expr.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <string>

#include "metile/support/errors.h"

namespace metile::discovery {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Expr parse() {
    Expr e = expr();
    skip_space();
    if (pos_ < text_.size()) error("unexpected '" + std::string(1, text_[pos_]) + "'");
    return e;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    throw UserError("law expression '" + std::string(text_) + "': " + what + " at column " +
                    std::to_string(pos_ + 1));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  Expr expr() {
    Expr e = term();
    while (true) {
      if (eat('+'))
        e = e + term();
      else if (eat('-'))
        e = e - term();
      else
        return e;
    }
  }
  Expr term() {
    Expr e = unary();
    while (true) {
      if (eat('*'))
        e = e * unary();
      else if (eat('/'))
        e = e / unary();
      else
        return e;
    }
  }
  Expr unary() {
    if (!eat('-')) return primary();
    Expr operand = unary();
    if (operand.kind() == ExprKind::Const) return Expr::constant(-operand.value());
    return Expr::constant(0) - operand;
  }
  Expr primary() {
    skip_space();
    if (pos_ >= text_.size()) error("expected an expression");
    char c = text_[pos_];
    if (eat('(')) {
      Expr e = expr();
      if (!eat(')')) error("expected ')'");
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number();
    if (!std::isalpha(static_cast<unsigned char>(c)) && c != '_') error("expected an expression");
    size_t start = pos_;
    while (pos_ < text_.size() && name_char(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      size_t component = pos_;
      while (pos_ < text_.size() && name_char(text_[pos_])) ++pos_;
      if (pos_ == component) error("expected a component name after '.'");
    }
    std::string name(text_.substr(start, pos_ - start));
    if (name == "inf") return Expr::constant(std::numeric_limits<double>::infinity());
    if (!eat('(')) return Expr::var(name);
    return call(name);
  }
  Expr call(const std::string& name) {
    ExprKind kind = ExprKind::Var;
    bool found = false;
#define LAW_EXPR(k, text, arity, doc) \
  if (arity > 0 && name == text) {    \
    kind = ExprKind::k;               \
    found = true;                     \
  }
#include "metile/discovery/law_exprs.def"
    if (!found) error("unknown function '" + name + "'");
    std::vector<Expr> args{expr()};
    while (eat(',')) args.push_back(expr());
    if (!eat(')')) error("expected ')' or ','");
    if (static_cast<int>(args.size()) != expr_arity(kind))
      error(name + " takes " + std::to_string(expr_arity(kind)) + " operands, got " +
            std::to_string(args.size()));
    return Expr::make(kind, std::move(args));
  }
  Expr number() {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' ||
                                   ((text_[pos_] == '-' || text_[pos_] == '+') &&
                                    (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E'))))
      ++pos_;
    double value = 0;
    auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, value);
    if (ec != std::errc() || end != text_.data() + pos_) {
      pos_ = start;
      error("malformed number");
    }
    return Expr::constant(value);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

Expr parse_expr(std::string_view text) {
  return Parser(text).parse();
}

}  // namespace metile::discovery
