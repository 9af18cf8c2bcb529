// The Metal Shading Language dialect of the C-style emitter.
#pragma once

#include "metile/codegen/dialect.h"

namespace metile::codegen {

const CDialect& msl_dialect();

}  // namespace metile::codegen
