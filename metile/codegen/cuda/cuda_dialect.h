// CUDA C++ as a dialect of the C-style emitter (docs/cuda.md, "The CUDA dialect"): the
// source NVRTC compiles for the CUDA targets (sm90).
#pragma once

#include "metile/codegen/dialect.h"

namespace metile::codegen {

const CDialect& cuda_dialect();

}  // namespace metile::codegen
