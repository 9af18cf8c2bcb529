// The late verifier of grouped vector accesses (group_vector_accesses.h), run after the
// Metal IR passes: what the grouping promised must still hold after optimization.
//
//   types     packed accesses move f16, bf16 or f32 through device pointers (the Metal IR
//             verifier checks the op types themselves)
//   geometry  the vector fits the target (max_vector_elements, max_vector_bytes)
//   extracts  every extract reads a packed_load defined before it in its block, and a
//             packed_load's vector is read only by extracts
//   guards    a packed access beside a scalar fallback (if cond {packed} else {scalars})
//             covers exactly the fallback's consecutive addresses, and cond requires every
//             fallback mask, the widened-index check for 32-bit indices, and the alignment
//             on targets that need it; such a target has no unguarded packed access
#pragma once

#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::lower {

// InternalError naming the op and the broken rule.
void verify_vector_accesses(const ir::Kernel& k, const target::Target& target);

}  // namespace metile::lower
