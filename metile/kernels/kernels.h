// The kernel library, written with metile::dsl: each function traces one kernel.
#pragma once

#include "metile/kernels/rms_norm.h"
#include "metile/kernels/row_sum.h"
#include "metile/kernels/softmax.h"
#include "metile/kernels/vector_add.h"
