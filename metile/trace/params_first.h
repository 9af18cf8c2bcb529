// Parameters may be declared at any point of a C++ kernel (they are not ops), so a
// parameter's value can come after op results. This renumbers the values of a finished
// trace so that the parameters are %0..%n-1 in declaration order and every other value
// keeps its relative order: the kernel a frontend declaring its parameters first builds.
#pragma once

#include "metile/ir/ir.h"

namespace metile::trace {

void number_params_first(ir::Kernel& kernel);

}  // namespace metile::trace
