#include "metile/runtime/devices.h"

#include <cstdlib>
#include <mutex>
#include <optional>

#include "metile/support/errors.h"

#if METILE_WITH_HOST_EMULATOR
#include "metile/runtime/host/host_device.h"
#endif
#if METILE_WITH_CUDA
#include "metile/runtime/cuda/cuda_device.h"
#endif

namespace metile::runtime {

namespace {

struct Entry {
  std::string name;
  DeviceFactory factory;
  // Why the device cannot be used on this machine ("" when it can); none: always usable.
  std::function<std::string()> unavailable;
  std::string unavailable_reason() const { return unavailable ? unavailable() : ""; }
};

// Every device meTile knows, and why a build may lack it.
struct KnownDevice {
  std::string_view name;
  std::string_view missing;
};
constexpr KnownDevice kKnownDevices[] = {
    {"host", "built without the host emulator (METILE_WITH_HOST_EMULATOR=OFF)"},
    {"cuda", "built without the cuda device (METILE_WITH_CUDA=OFF)"},
    {"metal", "meTile has no Metal runtime yet"},
};

// The device folders this build has, host first.
std::vector<Entry> builtin_devices() {
  std::vector<Entry> entries;
#if METILE_WITH_HOST_EMULATOR
  entries.push_back({"host", []() -> Device& { return host::host_device(); }, nullptr});
#endif
#if METILE_WITH_CUDA
  entries.push_back(
      {"cuda", []() -> Device& { return cuda::cuda_device(); }, cuda::cuda_unavailable_reason});
#endif
  return entries;
}

// A GPU is preferred when there is one; then the registration order.
constexpr std::string_view kPreferredDefault = "cuda";

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
  r.entries.push_back({std::move(name), std::move(factory), nullptr});
}

namespace {
std::optional<Entry> find_entry(std::string_view name) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const Entry& e : r.entries)
    if (e.name == name) return e;
  return std::nullopt;
}

}  // namespace

Device* find_device(std::string_view name) {
  // Created outside the registry's lock: a device may be slow to open.
  const std::optional<Entry> entry = find_entry(name);
  if (!entry || !entry->unavailable_reason().empty()) return nullptr;
  return &entry->factory();
}

std::string device_unavailable_reason(std::string_view name) {
  const std::optional<Entry> entry = find_entry(name);
  return entry ? entry->unavailable_reason() : "device '" + std::string(name) + "' is not built";
}

Device& get_device(std::string_view name) {
  if (const std::optional<Entry> entry = find_entry(name)) {
    if (const std::string why = entry->unavailable_reason(); !why.empty())
      throw UserError("device '" + std::string(name) +
                      "' is not available on this machine: " + why);
    return entry->factory();
  }
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
  if (const char* chosen = std::getenv("METILE_DEVICE"); chosen && *chosen)
    return get_device(chosen);
  if (Device* preferred = find_device(kPreferredDefault)) return *preferred;
  std::vector<Entry> entries;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    entries = r.entries;
  }
  for (const Entry& e : entries)
    if (e.unavailable_reason().empty()) return e.factory();
  throw NotSupported("this build has no usable device: " +
                     (entries.empty() ? std::string(kKnownDevices[0].missing)
                                      : "none of " + joined(device_names()) + " is available"));
}

}  // namespace metile::runtime
