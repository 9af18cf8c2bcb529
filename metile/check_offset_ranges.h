// Launch-time proof that no address offset wraps (issue 10, item 5): with the grid, the
// threads per threadgroup and the scalar arguments known, every integer add, sub and mul that
// feeds an address (a ptr_add offset) gets the interval of values it can take, from
// constants, program ids, aranges and the arguments. One that leaves its dtype's range would
// compute a wrapped address: the launch is refused naming the expression, its source line and
// the range it reaches. Values the launch does not determine (loaded data, loop-carried
// values) are not claimed either way.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "metile/ir/ir.h"

namespace metile {

// UserError "launch of K with grid (...): the offset `mul %a, %b` (file:line) reaches ...".
// `scalars` maps integer scalar parameters (their values) to what the launch passes.
void check_offset_ranges(const ir::Kernel& tile, std::array<int64_t, 3> grid,
                         int threads_per_threadgroup,
                         const std::map<ir::ValueId, int64_t>& scalars);

}  // namespace metile
