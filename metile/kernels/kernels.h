// The kernel library, written with metile::dsl: each function traces one kernel.
#pragma once

#include "metile/kernels/gemm.h"
#include "metile/kernels/gemv.h"
#include "metile/kernels/rms_norm.h"
#include "metile/kernels/row_sum.h"
#include "metile/kernels/softmax.h"
#include "metile/kernels/vector_add.h"

#include <vector>

namespace metile::kernels {

// Every library kernel with its default block size, once per dtype, for tests and tools
// that run something over the whole library.
inline std::vector<ir::Kernel> library(const std::vector<ir::DType>& dtypes) {
  std::vector<ir::Kernel> all;
  for (ir::DType dtype : dtypes) {
    all.push_back(vector_add(dtype));
    all.push_back(softmax(dtype));
    all.push_back(rms_norm(dtype));
    all.push_back(row_sum(dtype));
    all.push_back(gemm(dtype, dtype));
  }
  return all;
}

}  // namespace metile::kernels
