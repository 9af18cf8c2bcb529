// The runtime interface every execution target implements (DESIGN.md, "Layout":
// backends split by folder behind one small interface). A device names the Target the
// compiler emits for, builds the emitted source into an opaque Module, and launches
// modules it built. The devices of a build are listed in devices.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/buffer.h"
#include "metile/runtime/kernel_args.h"
#include "metile/target/target.h"

namespace metile::runtime {

// What a device built from one kernel's source: only that device can launch it. It keeps
// the ABI the source was emitted with, which every launch checks its arguments against.
class Module {
 public:
  explicit Module(codegen::KernelABI abi) : abi_(std::move(abi)) {}
  virtual ~Module() = default;
  const codegen::KernelABI& abi() const { return abi_; }

 private:
  codegen::KernelABI abi_;
};

// How long one launch took, as the device measures it (wall clock on the host emulator;
// device events on a GPU), from the start of the launch until its last threadgroup ended.
// 0 for a launch that did not wait (LaunchOptions::wait false): nothing was measured.
struct LaunchTiming {
  double elapsed_ms = 0;
};

// How to launch: the device's queue to launch on (a CUstream on the cuda device; 0 is its
// default stream) and whether to wait for the kernel. Devices without queues ignore both:
// their launches always run to the end.
struct LaunchOptions {
  std::uintptr_t stream = 0;
  // true: launch() returns once the kernel finished, timed with device events. false: it
  // returns once the kernel is queued on `stream`, untimed; a fault inside the kernel
  // surfaces at the next call that waits for the device (synchronize(), a copy, a waiting
  // launch) as a KernelFaultError naming the last kernel launched.
  bool wait = true;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;  // the registry's name: "host"
  virtual std::string kind() const = 0;  // "host" | "cuda" | "metal"
  // The Target the compiler emits for when it compiles for this device.
  virtual const target::Target& target() const = 0;
  virtual Buffer allocate(std::size_t bytes) = 0;
  // Builds `source`, emitted for target() with `abi`, into a module (cached by content).
  virtual std::shared_ptr<const Module> compile(std::string_view source,
                                                const codegen::KernelABI& abi) = 0;
  // Runs `module` over `grid` threadgroups and returns when it finished (or, with
  // options.wait false on a device with queues, once it is queued). Arguments are checked
  // against the module's ABI first (UserError naming the parameter); a module another
  // device built is a UserError. Both are raised at the call, waiting or not.
  virtual LaunchTiming launch(const Module& module, const Grid& grid,
                              std::span<const KernelArg> args,
                              const LaunchOptions& options = {}) = 0;
  // Waits until every kernel launched on the device finished; a fault of one that did not
  // wait is raised here. A device whose launches always wait has nothing to do.
  virtual void synchronize() {}
  // How many GPUs the device drives (cuda: every visible GPU, each with its own context,
  // modules and limits); 1 for a device of one processor.
  virtual int gpu_count() const { return 1; }
  // Waits for the kernels launched on GPU `index` only (synchronize() waits for all);
  // UserError for an index outside [0, gpu_count()).
  virtual void synchronize_gpu(int index);
  // A buffer over `bytes` of this device's memory at `address` that the caller owns and
  // keeps alive (a torch tensor's storage): no copy, and the buffer never frees it.
  // UserError on a device that cannot address foreign memory.
  virtual Buffer wrap(std::uintptr_t address, std::size_t bytes);

  // A buffer for `shape` elements of `dtype`, carrying both as metadata.
  Buffer allocate(ir::DType dtype, std::vector<int64_t> shape);
};

}  // namespace metile::runtime
