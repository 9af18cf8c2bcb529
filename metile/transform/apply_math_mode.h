#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// STRICT_MATH drops every `fast` attribute (precise math everywhere); RELAXED_PRECISION
// marks every transcendental `fast`. Default keeps what the kernel author wrote.
ir::PassResult apply_math_mode(ir::Kernel kernel, bool strict, bool relaxed);

}  // namespace metile::transform
