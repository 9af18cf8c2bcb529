// Which buffer each device pointer of a Metal IR kernel may point into, and how many bytes an
// access moves: the facts both targets' bounds checks are built on (the host emulator's, always
// on, and CUDA's under METILE_DEBUG=bounds; docs/reliability.md, "Out-of-bounds accesses").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>

#include "metile/ir/ir.h"

namespace metile::codegen {

// The root of a pointer made from an integer (Triton's int_to_ptr): no parameter bounds it.
inline constexpr size_t kMadeFromInteger = static_cast<size_t>(-1);

// Per device pointer value, the buffer parameters (indices into k.params) it may point into.
using PointerRoots = std::map<ir::ValueId, std::set<size_t>>;

// Reached from a parameter through ptr_add, select, loop-carried values and if or while
// results; a pointer cast from an integer has the root kMadeFromInteger.
PointerRoots pointer_roots(const ir::Kernel& k);

// The bytes one access of a value of type t moves (a 3-wide vector is 4 wide in MSL).
int64_t access_bytes(const ir::Type& t);

}  // namespace metile::codegen
