#include "metile/runtime/host/host_module.h"

#include <dlfcn.h>

#include "metile/runtime/host/runtime_table.h"

namespace metile::runtime::host {

std::shared_ptr<HostModule> HostModule::load(const std::filesystem::path& path,
                                             std::string& error) {
  std::shared_ptr<HostModule> module(new HostModule);
  module->path_ = path;
  module->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!module->handle_) {
    const char* why = dlerror();
    error = why ? why : "dlopen failed";
    return nullptr;
  }
  auto init =
      reinterpret_cast<MetileHostModuleInitFn>(dlsym(module->handle_, "metile_host_module_init"));
  module->run_thread_ =
      reinterpret_cast<MetileHostRunThreadFn>(dlsym(module->handle_, "metile_host_run_thread"));
  module->run_threadgroup_ = reinterpret_cast<MetileHostRunThreadgroupFn>(
      dlsym(module->handle_, "metile_host_run_threadgroup"));
  const auto* execution = static_cast<const char*>(dlsym(module->handle_, "metile_host_execution"));
  if (!init || !module->run_thread_ || !execution) {
    error = path.string() + " does not export the meTile host module entry points";
    return nullptr;
  }
  module->execution_ = execution;
  if (unsigned version = init(&host_runtime_table()); version != METILE_HOST_ABI_VERSION) {
    error = path.string() + " was built for host runtime ABI " + std::to_string(version);
    return nullptr;
  }
  return module;
}

HostModule::~HostModule() {
  if (handle_) dlclose(handle_);
}

}  // namespace metile::runtime::host
