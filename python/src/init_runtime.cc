// Device memory for Python: DeviceBuffer is a runtime::Buffer, allocated on a device and
// filled or read through host copies. metile.Buffer (python/metile/buffer.py) wraps it.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "dtype_names.h"
#include "init.h"
#include "metile/runtime/buffer.h"
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
