#include "metile/runtime/devices.h"

#include <mutex>

#include "metile/support/errors.h"

#if METILE_WITH_HOST_EMULATOR
#include "metile/runtime/host/host_device.h"
#endif

namespace metile::runtime {

namespace {

struct Entry {
  std::string name;
  DeviceFactory factory;
};

// Every device meTile knows, and why a build may lack it.
struct KnownDevice {
  std::string_view name;
  std::string_view missing;
};
constexpr KnownDevice kKnownDevices[] = {
    {"host", "built without the host emulator (METILE_WITH_HOST_EMULATOR=OFF)"},
    {"cuda", "meTile has no CUDA runtime yet"},
    {"metal", "meTile has no Metal runtime yet"},
};

// The device folders this build has, in order of preference for the default device.
std::vector<Entry> builtin_devices() {
  std::vector<Entry> entries;
#if METILE_WITH_HOST_EMULATOR
  entries.push_back({"host", []() -> Device& { return host::host_device(); }});
#endif
  return entries;
}

struct Registry {
  std::mutex mutex;
  std::vector<Entry> entries = builtin_devices();
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "none" : out;
}

}  // namespace

void register_device(std::string name, DeviceFactory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const Entry& e : r.entries)
    if (e.name == name) throw UserError("device '" + name + "' is already registered");
  r.entries.push_back({std::move(name), std::move(factory)});
}

Device* find_device(std::string_view name) {
  DeviceFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    for (const Entry& e : r.entries)
      if (e.name == name) factory = e.factory;
  }
  return factory ? &factory() : nullptr;  // created outside the lock: a device may be slow to open
}

Device& get_device(std::string_view name) {
  if (Device* device = find_device(name)) return *device;
  for (const KnownDevice& known : kKnownDevices)
    if (known.name == name)
      throw NotSupported("device '" + std::string(name) +
                         "' is not available in this build: " + std::string(known.missing));
  throw UserError("unknown device '" + std::string(name) +
                  "'; this build has: " + joined(device_names()));
}

std::vector<std::string> device_names() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const Entry& e : r.entries) names.push_back(e.name);
  return names;
}

Device& default_device() {
  DeviceFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (!r.entries.empty()) factory = r.entries.front().factory;
  }
  if (!factory)
    throw NotSupported("this build has no device: " + std::string(kKnownDevices[0].missing));
  return factory();
}

}  // namespace metile::runtime
