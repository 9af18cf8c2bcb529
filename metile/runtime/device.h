// The runtime interface every execution target implements (DESIGN.md, "Layout":
// backends split by folder behind one small interface). The host device is always
// available; cuda and metal devices live in their own folders when built.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metile/runtime/buffer.h"
#include "metile/runtime/kernel_args.h"

namespace metile::runtime {

struct CompiledKernel;

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // "host"
  virtual std::string kind() const = 0;  // "host" | "cuda" | "metal"
  virtual Buffer allocate(std::size_t bytes) = 0;
  // Runs `kernel` over `grid` threadgroups and returns when it finished. Arguments are
  // checked against the kernel's ABI first (UserError naming the parameter).
  virtual void launch(const CompiledKernel& kernel, const Grid& grid,
                      std::span<const KernelArg> args) = 0;

  // A buffer for `shape` elements of `dtype`, carrying both as metadata.
  Buffer allocate(ir::DType dtype, std::vector<int64_t> shape);
};

// The device kernels run on unless told otherwise: the host emulator.
Device& default_device();
// "host"; other names are a NotSupported error until their runtime is built.
Device& get_device(std::string_view name);

}  // namespace metile::runtime
