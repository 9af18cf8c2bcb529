// Shared by the library kernels: the storage dtypes they accept, and their names.
#pragma once

#include <string>

#include "metile/ir/types.h"

namespace metile::kernels {

// A UserError naming `kernel` unless dtype is f16, bf16 or f32.
void check_storage_dtype(const std::string& kernel, ir::DType dtype);
// "softmax_f16": one kernel name per storage dtype, so caches and dumps keep them apart.
std::string kernel_name(const std::string& kernel, ir::DType dtype);

}  // namespace metile::kernels
