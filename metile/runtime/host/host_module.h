// A compiled kernel module: a shared object built from emitted MSL plus its trampoline,
// dlopen'ed privately (RTLD_LOCAL) and handed the emulator's runtime table.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "metile/runtime/host/msl/host_runtime_abi.h"

namespace metile::runtime::host {

class HostModule {
 public:
  // Loads `path`; nullptr (and `error` set) when it is not a loadable kernel module.
  static std::shared_ptr<HostModule> load(const std::filesystem::path& path, std::string& error);
  ~HostModule();
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;

  MetileHostRunThreadFn run_thread() const { return run_thread_; }
  // The work-group function's entry, or nullptr when the kernel runs on fibers only.
  MetileHostRunThreadgroupFn run_threadgroup() const { return run_threadgroup_; }
  // "workgroup", or "fibers (<why>)" (docs/host_emulator.md, "Execution strategies").
  const std::string& execution() const { return execution_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  HostModule() = default;
  void* handle_ = nullptr;
  MetileHostRunThreadFn run_thread_ = nullptr;
  MetileHostRunThreadgroupFn run_threadgroup_ = nullptr;
  std::string execution_;
  std::filesystem::path path_;
};

}  // namespace metile::runtime::host
