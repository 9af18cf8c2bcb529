// Constants as C-family literals that denote exactly the value of the result dtype.
#pragma once

#include <string>
#include <string_view>

#include "metile/codegen/dialect.h"
#include "metile/ir/ir.h"

namespace metile::codegen {

// The value rounded to `t` (f16, bf16, f32: round to nearest even; beyond the largest
// finite value: infinity), returned as a double that holds it exactly.
double round_to_dtype(double value, ir::DType t);

// A float literal for a finite f32 value: "1.5f", "2.0f", "1e-08f".
std::string float_literal(float value);
// A decimal literal that reads back as the same double (an f64 constant; no suffix).
std::string double_literal(double value);

// The literal of the constant op's value in the result dtype t: finite floats as above (f16
// and bf16 wrapped in a conversion, e.g. "half(1.5f)"), NaN and infinities as the dialect's
// special_float, integers with the type's suffix.
std::string constant_literal(const ir::Attr& value, ir::DType t, const CDialect& dialect);

// A C string literal whose characters are `text`'s bytes: "a \"b\"\n".
std::string string_literal(std::string_view text);

}  // namespace metile::codegen
