#include "metile/kernels/storage_dtype.h"

#include "metile/support/errors.h"

namespace metile::kernels {

void check_storage_dtype(const std::string& kernel, ir::DType dtype) {
  if (dtype != ir::DType::f16 && dtype != ir::DType::bf16 && dtype != ir::DType::f32)
    throw UserError(kernel + ": storage dtype must be f16, bf16 or f32, got " +
                    std::string(ir::dtype_name(dtype)));
}

std::string kernel_name(const std::string& kernel, ir::DType dtype) {
  return kernel + "_" + std::string(ir::dtype_name(dtype));
}

}  // namespace metile::kernels
