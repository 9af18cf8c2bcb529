#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// A tile of pointers that a loop carries and advances by one uniform amount per iteration
// (Triton's `a_ptrs += BLOCK_K * stride_ak`) becomes the loop's initial tile plus a carried
// i64 scalar offset:
//
//   %p = for ... carrying %a (init %i)         %o = for ... carrying %off: i64 (init 0)
//     ... uses of %a ...                 =>      %a = ptr_add %i, splat(%off)
//     yield ptr_add(%a, splat(%s))               ... uses of %a ...
//                                                yield %off + (i64) %s
//                                            %p = ptr_add %i, splat(%o)
//
// Where the initial tile is ptr_add(splat(p), offsets), the body's is
// ptr_add(splat(ptr_add(p, off)), offsets) instead: one uniform base pointer per iteration.
// Each iteration's tile is then the initial tile's index computation plus a uniform scalar,
// which lowering recomputes at any thread's elements (and proves consecutive for vector
// accesses) instead of carrying one register pointer per element. The offset is i64, so no
// sum of steps wraps where the pointers themselves would not. Other carried values, and
// pointer tiles advanced otherwise, are left alone.
ir::PassResult rebase_carried_pointers(ir::Kernel k);

}  // namespace metile::transform
