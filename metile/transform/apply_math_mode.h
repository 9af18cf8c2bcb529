#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// STRICT_MATH drops every `fast` attribute (precise math everywhere) and every dot's
// precision (ieee); RELAXED_PRECISION marks every transcendental `fast` and gives f32 dots
// without a precision tf32. Default keeps what the kernel author wrote.
ir::PassResult apply_math_mode(ir::Kernel kernel, bool strict, bool relaxed);

}  // namespace metile::transform
