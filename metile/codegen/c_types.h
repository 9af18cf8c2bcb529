// Spelling IR types in a C-like dialect.
#pragma once

#include <string>

#include "metile/codegen/dialect.h"
#include "metile/ir/types.h"

namespace metile::codegen {

// "float", "half4", "device const float*", "threadgroup int*", "simdgroup_float8x8". Tiles and
// descriptors are a UserError (they do not exist in Metal IR). read_only adds const to a pointee.
std::string type_name(const ir::Type& t, const CDialect& dialect, bool read_only = false);

// The same type with f32 elements: what f16/bf16 math is computed in.
std::string float_type_name(const ir::Type& t, const CDialect& dialect);

}  // namespace metile::codegen
