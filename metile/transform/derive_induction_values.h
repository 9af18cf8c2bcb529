#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// A scalar a loop carries and advances by one loop-invariant amount per iteration becomes a
// function of the induction variable, so the loop stops carrying it:
//
//   %r = for %i = s, e, t carrying %c (init %x)        for %i = s, e, t
//     ... uses of %c ...                          =>      %c = %x + (cast) ((%i - s) / t) * %d
//     yield %c + %d                                       ... uses of %c ...
//
// It applies where %d is defined outside the loop and the loop's result %r is unused (the
// value after the last iteration would need the trip count). The rebased pointer offsets of
// rebase_carried_pointers are such scalars: once they are derived, a K loop that carries only
// its accumulator is the canonical loop the software pipeline stages (lower_pipelined_loop.cc),
// and any iteration's operand addresses can be computed ahead of it.
ir::PassResult derive_induction_values(ir::Kernel k);

}  // namespace metile::transform
