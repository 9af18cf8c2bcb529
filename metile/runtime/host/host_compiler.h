// Compiles emitted MSL for the host emulator: the MSL plus a generated trampoline is
// built by the system C++ compiler against the metal_stdlib emulation into a shared
// object, which is cached on disk by content key and kept loaded in-process.
//
// Environment: METILE_HOST_CXX (compiler command, default "c++"), METILE_HOST_CXXFLAGS
// (extra flags), METILE_HOST_RACECHECK=1 (instrument threadgroup-memory accesses for race
// checking), METILE_CACHE_DIR (cache root; objects under <root>/host; default
// $XDG_CACHE_HOME/metile or ~/.cache/metile).
#pragma once

#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/disk_cache.h"
#include "metile/runtime/host/host_module.h"

namespace metile::runtime::host {

struct HostCompilerOptions {
  std::vector<std::string> cxx;          // the compiler command, possibly with a launcher
  std::vector<std::string> extra_flags;  // appended after the fixed flags
  std::filesystem::path cache_dir;       // where objects and the stdlib headers live
  // Every load and store reports to the emulator, which checks threadgroup memory for races.
  bool race_check = false;

  static HostCompilerOptions from_environment();
};

class HostCompiler {
 public:
  explicit HostCompiler(HostCompilerOptions options = HostCompilerOptions::from_environment());
  // The process-wide compiler, configured from the environment.
  static HostCompiler& shared();

  // The loaded module for (msl, abi). Compile errors are InternalErrors (generated code
  // must compile) carrying the compiler's message and the path of the kept source.
  std::shared_ptr<const HostModule> compile(std::string_view msl, const codegen::KernelABI& abi);

  struct Stats {
    int compiler_runs = 0;  // invocations of the C++ compiler for a kernel
    int disk_hits = 0;
    int memory_hits = 0;
  };
  Stats stats() const;
  const HostCompilerOptions& options() const { return options_; }
  // The fixed flags every kernel is built with (part of the cache key).
  static const std::vector<std::string>& base_flags();
  // What a race-checking build adds: the accesses are instrumented (-fsanitize=thread) and
  // reported to the module's own hooks (race_check_hooks), so the object is compiled with -c
  // and linked without the sanitizer's runtime.
  static const std::vector<std::string>& race_check_flags();

 private:
  std::shared_ptr<const HostModule> load_or_build(const std::string& key, const std::string& source,
                                                  const std::string& kernel_name);
  const std::filesystem::path& stdlib_dir();  // materializes the embedded headers once
  const std::string& compiler_identity();     // `<cxx> --version`, once
  // base_flags(), -march=native on x86-64 and, for GCC, the flags that keep its compile time
  // linear in the kernel.
  const std::vector<std::string>& compiler_flags();

  HostCompilerOptions options_;
  DiskCache cache_;
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<std::shared_ptr<const HostModule>>> loaded_;
  Stats stats_;
  std::once_flag identity_once_, stdlib_once_, flags_once_;
  std::string identity_;
  std::string native_isa_;  // the CPU -march=native builds for (part of the key), or ""
  std::vector<std::string> flags_;
  std::filesystem::path stdlib_dir_;
};

}  // namespace metile::runtime::host
