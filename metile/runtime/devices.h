// The devices of this build, by name. Each device lives in its own folder (host/, later
// cuda/ and metal/) built behind a CMake option; devices.cc lists the folders this build
// has, and programs or tests may register more.
// A device known to meTile but not built here is a NotSupported error, an unknown name a
// UserError listing the devices there are.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "metile/runtime/device.h"

namespace metile::runtime {

// Returns the process-wide instance, creating it on first use.
using DeviceFactory = std::function<Device&()>;

// Adds a device; UserError when the name is already registered.
void register_device(std::string name, DeviceFactory factory);
// The registered device `name` when it is usable here, or nullptr.
Device* find_device(std::string_view name);
// The registered device `name`; NotSupported for a known device this build lacks,
// UserError for an unknown name or a device this machine cannot use (the message says
// why: no libcuda, no GPU).
Device& get_device(std::string_view name);
// Why the registered device `name` cannot be used here; "" when it can.
std::string device_unavailable_reason(std::string_view name);
// The registered devices, in registration order (built-in devices first), usable here
// or not.
std::vector<std::string> device_names();
// The device kernels run on unless told otherwise: METILE_DEVICE when it is set (an error
// when that device is unusable), else cuda when a GPU is present, else the first usable
// registered device (the host emulator when it is built); NotSupported when there is none.
Device& default_device();

}  // namespace metile::runtime
