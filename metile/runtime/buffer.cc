#include "metile/runtime/buffer.h"

#include <string>

#include "metile/runtime/device.h"
#include "metile/support/errors.h"

namespace metile::runtime {

Buffer::Buffer(std::shared_ptr<BufferStorage> storage, std::optional<ir::DType> dtype,
               std::vector<int64_t> shape)
    : storage_(std::move(storage)), dtype_(dtype), shape_(std::move(shape)) {}

void* Buffer::data() const {
  void* p = storage_->host_data();
  if (!p)
    throw UserError("buffer on device '" + device().name() +
                    "' is not host-visible; use copy_to_host / copy_from_host");
  return p;
}

void Buffer::check_range(const char* what, std::size_t offset, std::size_t bytes) const {
  if (offset > size_bytes() || bytes > size_bytes() - offset)
    throw UserError(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " +
                    std::to_string(offset) + " exceeds the buffer of " +
                    std::to_string(size_bytes()) + " bytes");
}

void Buffer::copy_from_host(const void* src, std::size_t bytes, std::size_t offset) {
  check_range("copy_from_host", offset, bytes);
  storage_->copy_from_host(offset, src, bytes);
}

void Buffer::copy_to_host(void* dst, std::size_t bytes, std::size_t offset) const {
  check_range("copy_to_host", offset, bytes);
  storage_->copy_to_host(offset, dst, bytes);
}

}  // namespace metile::runtime
