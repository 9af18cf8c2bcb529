#include "metile/codegen/prelude.h"

namespace metile::codegen {

std::string Prelude::floordiv(ir::DType t, const std::string& a, const std::string& b) {
  floordiv_types_.insert(t);
  return std::string(dialect_.table().helper_prefix) + "floordiv(" + a + ", " + b + ")";
}

std::string Prelude::text() const {
  std::string out;
  const DialectTable& d = dialect_.table();
  for (ir::DType t : floordiv_types_) {
    const std::string T(dialect_.scalar_type(t));
    // The truncated quotient is one too large when the division is inexact and the operands
    // have opposite signs.
    out += std::string(d.body_qualifier) + " " + T + " " + std::string(d.helper_prefix) +
           "floordiv(" + T + " a, " + T + " b) {\n  const " + T +
           " q = a / b;\n  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n";
  }
  return out;
}

}  // namespace metile::codegen
