// Devices for Python: DeviceBuffer is a runtime::Buffer, allocated on a device and filled
// or read through host copies (metile.Buffer, python/metile/buffer.py, wraps it);
// build_kernel() builds an emitted source with its ABI on a device into a BuiltKernel
// (how a benchmark runs another meTile tree's source); synchronize() waits for a device or
// one of its GPUs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "dtype_names.h"
#include "init.h"
#include "launch_args.h"
#include "metile/runtime/buffer.h"
#include "metile/runtime/compiled_kernel.h"
#include "metile/runtime/devices.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace metile::python {

void init_runtime(nb::module_& m) {
  using runtime::Buffer;
  nb::class_<Buffer>(m, "DeviceBuffer", "One allocation of device memory.")
      .def_static(
          "allocate",
          [](const std::string& device, const std::string& dtype, std::vector<int64_t> shape) {
            ir::DType t = dtype_from_name(dtype);
            return runtime::get_device(device).allocate(t, std::move(shape));
          },
          "device"_a, "dtype"_a, "shape"_a,
          "Allocates shape elements of dtype on a device (a name from devices()).")
      .def_static(
          "wrap",
          [](const std::string& device, uintptr_t address, size_t bytes, const std::string& dtype,
             std::vector<int64_t> shape) {
            return runtime::get_device(device)
                .wrap(address, bytes)
                .with_metadata(dtype_from_name(dtype), std::move(shape));
          },
          "device"_a, "address"_a, "bytes"_a, "dtype"_a, "shape"_a,
          "Memory the caller owns on a device (a torch CUDA tensor's data_ptr), used in place: "
          "no copy, never freed by meTile; the caller keeps it alive.")
      .def_prop_ro("size_bytes", &Buffer::size_bytes, "The allocation's length in bytes.")
      .def_prop_ro(
          "host_address",
          [](const Buffer& b) { return reinterpret_cast<uintptr_t>(b.storage().host_data()); },
          "The address kernels see on a device whose memory the host sees (host), else 0.")
      .def_prop_ro(
          "device", [](const Buffer& b) { return b.device().name(); }, "The device's name.")
      .def(
          "copy_from_host",
          [](Buffer& b, uintptr_t src, size_t bytes) {
            nb::gil_scoped_release release;
            b.copy_from_host(reinterpret_cast<const void*>(src), bytes);
          },
          "src"_a, "bytes"_a, "Copies bytes from host memory at address src into the buffer.")
      .def(
          "copy_to_host",
          [](const Buffer& b, uintptr_t dst, size_t bytes) {
            nb::gil_scoped_release release;
            b.copy_to_host(reinterpret_cast<void*>(dst), bytes);
          },
          "dst"_a, "bytes"_a, "Copies the buffer's first bytes to host memory at address dst.");

  using runtime::CompiledKernel;
  nb::class_<CompiledKernel>(m, "BuiltKernel",
                             "An emitted source and its ABI, built by a device "
                             "(build_kernel): launch it like a CompiledKernel.")
      .def_prop_ro(
          "name", [](const CompiledKernel& k) { return k.abi().kernel_name; },
          "The kernel's entry name.")
      .def_ro("source", &CompiledKernel::source, "The source it was built from.")
      .def_prop_ro(
          "abi", [](const CompiledKernel& k) { return abi_dict(k.abi()); },
          "The KernelABI it was built with, as CompiledKernel.abi gives it.")
      .def_prop_ro(
          "device", [](const CompiledKernel& k) { return k.device->name(); },
          "The name of the device that built it.")
      .def(
          "launch",
          [](const CompiledKernel& k, std::array<int64_t, 3> grid, const nb::list& args,
             uintptr_t stream, bool wait) { return launch_on_stream(k, grid, args, stream, wait); },
          "grid"_a, "args"_a, "stream"_a = 0, "wait"_a = true, kLaunchDoc);
  m.def(
      "build_kernel",
      [](const std::string& device, std::string source, const nb::dict& abi) {
        const codegen::KernelABI parsed = abi_from_dict(abi);  // ValueError before any device
        runtime::Device& d = runtime::get_device(device);
        std::optional<runtime::CompiledKernel> built;
        {
          nb::gil_scoped_release release;
          built.emplace(runtime::build_kernel(d, std::move(source), parsed));
        }
        raise_core_warnings();  // an untrusted compiled-object cache, say
        return std::move(*built);
      },
      "device"_a, "source"_a, "abi"_a,
      "Builds `source`, emitted for the device's target, with `abi` (a dict as "
      "CompiledKernel.abi gives it) on `device` (a name from devices()), as compile() builds "
      "what the pipeline emits: the same compiler and options (NVRTC's on cuda), cached the "
      "same way. ValueError for a malformed ABI; CompilationError for a device this machine "
      "cannot use; InternalCompilerError with the compiler's log for a source that does not "
      "compile.");
  m.def(
      "synchronize",
      [](const std::string& device, int gpu) {
        runtime::Device& d =
            device.empty() ? runtime::default_device() : runtime::get_device(device);
        nb::gil_scoped_release release;
        if (gpu < 0)
          d.synchronize();
        else
          d.synchronize_gpu(gpu);
      },
      "device"_a = "", "gpu"_a = -1,
      "Waits until every kernel launched on `device` (empty: the default device) finished, "
      "or only those of its GPU `gpu` (an ordinal; -1: all of them); the fault of a launch "
      "that did not wait is raised here.");
  m.def(
      "gpu_count",
      [](const std::string& device) {
        return (device.empty() ? runtime::default_device() : runtime::get_device(device))
            .gpu_count();
      },
      "device"_a = "",
      "How many GPUs `device` (empty: the default device) drives: the visible GPUs on cuda, "
      "1 on host.");
  m.def(
      "default_device", [] { return runtime::default_device().name(); },
      "The name of the device kernels and buffers use unless told otherwise: METILE_DEVICE "
      "when set, else cuda when a GPU is present, else host.");
  m.def("devices", &runtime::device_names, "The names of the devices this build has.");
  m.def(
      "device_unavailable_reason",
      [](const std::string& name) { return runtime::device_unavailable_reason(name); }, "name"_a,
      "Why a device of this build cannot be used on this machine; empty when it can.");
}

}  // namespace metile::python
