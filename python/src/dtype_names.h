// Dtypes cross the Python boundary as names ("f32") so Python needs no enums.
#pragma once

#include <string>

#include "metile/ir/types.h"

namespace metile::python {

// A dtype name ("f32") as a DType; UserError listing the known names when it is unknown.
ir::DType dtype_from_name(const std::string& name);

}  // namespace metile::python
