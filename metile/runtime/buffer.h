// Device memory. A Buffer is a shared handle to one allocation made by a Device; copies
// of the handle refer to the same memory. dtype and shape are optional metadata: when a
// buffer has a dtype, a launch checks it against the kernel's parameter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "metile/ir/types.h"

namespace metile::runtime {

class Device;

// One allocation; implemented by each device.
class BufferStorage {
 public:
  virtual ~BufferStorage() = default;
  virtual Device& device() const = 0;
  virtual std::size_t size_bytes() const = 0;
  // The memory as the host sees it; nullptr when the device's memory is not host-visible.
  virtual void* host_data() const = 0;
  virtual void copy_from_host(std::size_t offset, const void* src, std::size_t bytes) = 0;
  virtual void copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const = 0;
};

class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::shared_ptr<BufferStorage> storage, std::optional<ir::DType> dtype = {},
                  std::vector<int64_t> shape = {});

  bool valid() const { return storage_ != nullptr; }
  std::size_t size_bytes() const { return storage_->size_bytes(); }
  Device& device() const { return storage_->device(); }
  BufferStorage& storage() const { return *storage_; }
  const std::optional<ir::DType>& dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }

  // The same memory described as `shape` elements of `dtype`.
  Buffer with_metadata(std::optional<ir::DType> dtype, std::vector<int64_t> shape) const {
    return Buffer(storage_, dtype, std::move(shape));
  }

  // Host-visible memory; a UserError on a device whose memory the host cannot see.
  void* data() const;
  template <class T>
  T* data_as() const {
    return static_cast<T*>(data());
  }

  // Bounds-checked copies (UserError when [offset, offset + bytes) exceeds the buffer).
  void copy_from_host(const void* src, std::size_t bytes, std::size_t offset = 0);
  void copy_to_host(void* dst, std::size_t bytes, std::size_t offset = 0) const;

 private:
  void check_range(const char* what, std::size_t offset, std::size_t bytes) const;
  std::shared_ptr<BufferStorage> storage_;
  std::optional<ir::DType> dtype_;
  std::vector<int64_t> shape_;
};

}  // namespace metile::runtime
