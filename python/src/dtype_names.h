// The tracing core (metile/trace/kernel_trace.h) as the Python tracer drives it through
// init_ir.cc: names cross the boundary as text ("f32", "add", "lt") so Python needs no
// enums, and errors explain their fix in Python's terms.
#pragma once

#include <string>

#include "metile/ir/types.h"

namespace metile::python {

// A dtype name ("f32") as a DType; UserError listing the known names when it is unknown.
ir::DType dtype_from_name(const std::string& name);

// How to fix a value used outside the loop body that defined it, in Python.
inline constexpr const char* kEscapeHint = "assign the variable before the loop so it is carried";

}  // namespace metile::python
