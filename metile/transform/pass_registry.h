// Named IR-to-IR passes, for metile-opt and anything else that runs passes by name.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::transform {

struct Pass {
  std::string name;
  std::string description;
  std::function<ir::Kernel(ir::Kernel)> run;
};

// Adds a pass; a name registered twice is an InternalError. verify, canonicalize, cse and
// dce are always registered.
void register_pass(Pass pass);
// The pass of that name; UserError listing the known names when there is none.
const Pass& find_pass(const std::string& name);
// Every registered name, sorted.
std::vector<std::string> pass_names();

}  // namespace metile::transform
