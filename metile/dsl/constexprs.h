// Constexpr (specialisation) values handed to trace(): integers or floating point.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <string>
#include <variant>

namespace metile::dsl {

class ConstexprValue {
 public:
  template <std::integral T>
  ConstexprValue(T v) : value_(static_cast<int64_t>(v)) {}
  template <std::floating_point T>
  ConstexprValue(T v) : value_(static_cast<double>(v)) {}

  bool is_int() const { return std::holds_alternative<int64_t>(value_); }
  int64_t as_int() const { return std::get<int64_t>(value_); }
  double as_double() const {
    return is_int() ? static_cast<double>(as_int()) : std::get<double>(value_);
  }
  std::string str() const;

 private:
  std::variant<int64_t, double> value_;
};

// Constexpr name -> value, e.g. {{"BLOCK", 256}, {"EPS", 1e-5}}.
using Constexprs = std::map<std::string, ConstexprValue>;

}  // namespace metile::dsl
