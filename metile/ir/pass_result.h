// What an IR-to-IR pass returns: the kernel and whether the pass changed it. Each pass knows
// what it rewrote, so nothing prints the kernel before and after a pass to find out.
#pragma once

#include "metile/ir/ir.h"

namespace metile::ir {

struct PassResult {
  Kernel kernel;
  bool changed = false;
};

}  // namespace metile::ir
