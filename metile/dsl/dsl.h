// metile::dsl, the C++ eDSL: write a kernel as a C++ function, trace it into Tile IR.
// See docs/cpp_dsl.md.
#pragma once

#include "metile/dsl/constexprs.h"
#include "metile/dsl/control.h"
#include "metile/dsl/ops.h"
#include "metile/dsl/tensor.h"
#include "metile/dsl/trace.h"
#include "metile/dsl/value.h"
