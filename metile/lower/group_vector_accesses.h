// Grouped vector accesses (seed 004, "Contiguous register memory"): four f16, bf16 or f32
// scalar loads (or stores) of one thread whose addresses are consecutive elements become one
// packed vector access; eight 2-byte ones where one vector access moves 16 bytes of them
// (group_width). The proof is symbolic (vector_index.h): the pointers share one base and
// their indices differ by 0, 1, ..., width - 1 for every thread. The packed path runs only when
// every access's mask holds, the widened 32-bit indices are consecutive (a wrapping origin
// cannot fake it) and, on a target whose vector accesses need the vector's alignment, the
// address has it; otherwise each scalar access runs with its own mask and fill, so nothing
// is read past a ragged tensor. Grouped loads give a vector and explicit extracts that
// define the original scalar results. One-element async_copy ops group the same way when their
// sources are consecutive and their destinations move with them: the packed copy moves up to
// 16 bytes, both addresses aligned to its size. No access moves across another memory op: only pure
// ops (and, for loads, other loads) may sit between the group's accesses, and they keep
// their order.
#pragma once

#include <cstdint>

#include "metile/ir/ir.h"
#include "metile/ir/pass_result.h"
#include "metile/target/target.h"

namespace metile::lower {

// The dtypes whose accesses group: the 2- and 4-byte floats.
bool groupable_dtype(ir::DType t);

// The widest group of t's accesses on the target: the largest power of two from four up
// whose vector fits max_vector_elements and max_vector_bytes (4 f32, 8 f16 in 16 bytes on
// sm90; 4 of each on Apple's packed vectors), or 0 when four do not fit or t does not group.
// Narrower groups, down to four, form where a wider one does not.
int group_width(const target::Target& target, ir::DType t);

// How many groups were made (execution_report.grouped_loads / grouped_stores /
// grouped_copies).
struct VectorGroups {
  int64_t loads = 0;
  int64_t stores = 0;
  int64_t copies = 0;
};

// Groups k's accesses for `target` (whose max_vector_elements and max_vector_bytes must
// admit four elements) and adds the groups made to `groups`. Returns k unchanged when no
// group forms.
ir::PassResult group_vector_accesses(ir::Kernel k, const target::Target& target,
                                     VectorGroups& groups);

}  // namespace metile::lower
