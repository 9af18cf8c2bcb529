#include "metile/math_mode.h"

#include "metile/support/errors.h"

namespace metile {

std::string_view math_mode_name(MathMode m) {
  switch (m) {
    case MathMode::Default:
      return "default";
    case MathMode::Strict:
      return "strict";
    case MathMode::Relaxed:
      return "relaxed";
  }
  throw InternalError("math mode " + std::to_string(static_cast<int>(m)));
}

MathMode math_mode_from_name(std::string_view name) {
  for (MathMode m : {MathMode::Default, MathMode::Strict, MathMode::Relaxed})
    if (name == math_mode_name(m)) return m;
  throw UserError("math mode must be default, strict or relaxed, got '" + std::string(name) + "'");
}

}  // namespace metile
