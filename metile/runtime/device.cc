#include "metile/runtime/device.h"

#include "metile/support/errors.h"

namespace metile::runtime {

Buffer Device::allocate(ir::DType dtype, std::vector<int64_t> shape) {
  std::size_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) throw UserError("buffer shape has a negative dimension " + std::to_string(d));
    elements *= static_cast<std::size_t>(d);
  }
  return allocate(elements * static_cast<std::size_t>(ir::dtype_bytes(dtype)))
      .with_metadata(dtype, std::move(shape));
}

Buffer Device::wrap(std::uintptr_t, std::size_t) {
  throw UserError("device '" + name() + "' cannot use memory it did not allocate");
}

void Device::synchronize_gpu(int index) {
  if (index < 0 || index >= gpu_count())
    throw UserError("device '" + name() + "' has " + std::to_string(gpu_count()) +
                    " GPU(s); there is no GPU " + std::to_string(index));
  synchronize();
}

}  // namespace metile::runtime
