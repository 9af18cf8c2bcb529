#pragma once

#include <string>
#include <vector>

#include "metile/ir/pass_result.h"

namespace metile::transform {

// One conversion the pass removed or shortened, with the reason it is sound.
struct LayoutOptimization {
  std::string rule;        // "identity" | "inverse pair" | "chain"
  std::string conversion;  // the convert_layout rewritten: "%5 at kernel.py:12"
  std::string proof;       // why the values stay where the program expects them
};

struct ConversionElimination {
  ir::PassResult result;
  std::vector<LayoutOptimization> optimizations;
};

// Simplifies layout conversions (seed 004, "Eliminating redundant conversions"), after
// checking ownership (check_ownership.h), in program order:
// - a conversion to the layout its operand already has disappears (identity);
// - a conversion of a conversion reads the first one's operand instead (chain) when the
//   first has no other user, which then disappears; when that brings the value back to its
//   original layout, both disappear (inverse pair);
// - an intermediate conversion with other users stays, and so does the one reading it unless
//   it cancels.
// Only pure convert_layout ops move; nothing crosses a memory operation. A kernel without a
// removable conversion is returned unchanged (changed = false), without a copy.
ConversionElimination eliminate_redundant_conversions(ir::Kernel kernel);

}  // namespace metile::transform
