#include "metile/runtime/host/host_compiler.h"

#include <cstdlib>
#include <sstream>
#include <utility>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include "metile/runtime/host/embedded_stdlib.h"
#include "metile/runtime/host/subprocess.h"
#include "metile/runtime/host/trampoline.h"
#include "metile/support/errors.h"
#include "metile/support/hash.h"

namespace metile::runtime::host {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_words(const char* text) {
  std::vector<std::string> words;
  std::istringstream in(text ? text : "");
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::string stdlib_bundle_hash() {
  std::string all;
  for (const auto& f : embedded_stdlib_files()) {
    all += f.path;
    all += '\0';
    all += f.contents;
    all += '\0';
  }
  return content_hash(all);
}

// Every header of the bundle present with its exact bytes, in a file of the user's own: the
// folder name hashes what should be there, not what is.
bool stdlib_intact(const fs::path& dir) {
  std::string why;
  for (const auto& f : embedded_stdlib_files()) {
    const std::optional<std::string> bytes = read_trusted_file(dir / f.path, &why);
    if (!bytes || *bytes != f.contents) return false;
  }
  return true;
}

// The first part of the copy of the headers at `dir` (the folder, a subfolder, a file) that
// is not the user's own or that group or others may write to, and why; an empty path when
// every part is trusted (or `dir` is missing). The compiler reads these headers: a folder
// someone else may write to could get a header added between this check and the compile.
std::pair<fs::path, std::string> untrusted_part(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec))) return {};
  if (std::string why = untrusted_path_reason(dir); !why.empty()) return {dir, why};
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (std::string why = untrusted_path_reason(it->path()); !why.empty()) return {it->path(), why};
  if (ec) return {dir, "it cannot be listed"};
  return {};
}

// Makes `relative`'s folders under `base` one by one, owner-only.
void make_private_dirs(const fs::path& base, const fs::path& relative) {
  fs::path folder = base;
  for (const fs::path& part : relative) make_private_dir(folder /= part);
}

// The instruction set -march=native builds for, as the cache key needs it: on x86-64 the
// CPUID leaves that name the vendor, the model and every feature flag, and the extended
// state the OS enables (AVX, AVX-512). A cached module is only reused on a CPU that runs it.
// Empty where the host build stays with the portable baseline.
std::string native_isa() {
#if defined(__x86_64__)
  std::ostringstream key;
  unsigned a = 0, b = 0, c = 0, d = 0;
  for (const auto& [leaf, subleaf] :
       {std::pair{0u, 0u}, {1u, 0u}, {7u, 0u}, {7u, 1u}, {0x80000001u, 0u}}) {
    a = b = c = d = 0;
    __get_cpuid_count(leaf, subleaf, &a, &b, &c, &d);
    if (leaf == 1) b &= 0xffffff;  // without the APIC id of the core this runs on
    key << std::hex << a << '.' << b << '.' << c << '.' << d << ' ';
  }
  __get_cpuid(1, &a, &b, &c, &d);
  if (c & bit_OSXSAVE) {
    unsigned lo = 0, hi = 0;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    key << "xcr0 " << lo << '.' << hi;
  }
  return "x86-64 " + key.str();
#else
  return "";
#endif
}

}  // namespace

HostCompilerOptions HostCompilerOptions::from_environment() {
  HostCompilerOptions o;
  o.cxx = split_words(std::getenv("METILE_HOST_CXX"));
  if (o.cxx.empty()) o.cxx = {"c++"};
  o.extra_flags = split_words(std::getenv("METILE_HOST_CXXFLAGS"));
  o.cache_dir = cache_root() / "host";
  const char* race_check = std::getenv("METILE_HOST_RACECHECK");
  o.race_check = race_check && std::string(race_check) == "1";
  return o;
}

const std::vector<std::string>& HostCompiler::base_flags() {
  // -fno-strict-aliasing and -fwrapv: MSL code reinterprets threadgroup bytes and relies
  // on wrapping integer arithmetic, as the GPU does. -fsanitize=... in trap mode: an
  // integer division by zero, INT_MIN / -1, a shift by at least the bit width and a float
  // converted to an integer type that cannot hold it are checked and trap (SIGILL, a
  // KernelFaultError) instead of being undefined behaviour the compiler may exploit.
  // -fstack-clash-protection: a large frame probes every page, so an overflow hits the fiber
  // stack's guard page instead of jumping over it into a neighbour. -g1: the line table that maps a
  // fault back to the emitted line; -fno-crossjumping and -fno-tree-tail-merge keep one trap per
  // check, so a trap's line is its own operation's and not that of another check it was merged
  // with. -ffp-contract=off: no a*b+c becomes an FMA, so -march=native (compiler_flags) gives the
  // baseline's results. -fno-trapping-math: no kernel reads the FP exception flags, and
  // without it GCC will not if-convert a select of a float computation (the computation is
  // sunk into a branch it may not speculate), which keeps thread loops scalar; values are
  // unchanged. -fsigned-char: MSL's char (i8) is signed, as C++'s is not on every host (Arm).
  static const std::vector<std::string> flags{
      "-std=c++20",
      "-O2",
      "-g1",
      "-fPIC",
      "-shared",
      "-fvisibility=hidden",
      "-fno-strict-aliasing",
      "-fwrapv",
      "-fsigned-char",
      "-fsanitize=integer-divide-by-zero,signed-integer-overflow,shift-exponent,"
      "float-cast-overflow",
      "-fsanitize-undefined-trap-on-error",
      "-fno-crossjumping",
      "-fno-tree-tail-merge",
      "-fstack-clash-protection",
      "-ffp-contract=off",
      "-fno-trapping-math",
      "-Wno-attributes"};
  return flags;
}

const std::vector<std::string>& HostCompiler::race_check_flags() {
  static const std::vector<std::string> flags{"-fsanitize=thread", "--param",
                                              "tsan-instrument-func-entry-exit=0", "-c"};
  return flags;
}

const std::vector<std::string>& HostCompiler::compiler_flags() {
  std::call_once(flags_once_, [this] {
    flags_ = base_flags();
    // The CPU's own vector ISA, so thread loops vectorise in AVX2/AVX-512 (masked loads,
    // FMA for exp); the cache key holds native_isa(), so another CPU builds its own module.
    native_isa_ = native_isa();
    // 512-bit vectors where the CPU has them: the softmax of benchmarks/host_emulator.py
    // runs a fifth faster than with GCC's default preference for 256 bits.
    if (!native_isa_.empty())
      flags_.insert(flags_.end(), {"-march=native", "-mprefer-vector-width=512"});
    // GCC's default register allocator and points-to analysis grow quadratically with a
    // function's size: a straight-line kernel of 8,000 adds took 8.6 s of CPU, 1.6 s with
    // these (benchmarks/compile_scaling.py). Clang rejects both flags.
    if (compiler_identity().find("Free Software Foundation") != std::string::npos &&
        compiler_identity().find("clang") == std::string::npos)
      flags_.insert(flags_.end(), {"-fira-algorithm=priority", "-fno-tree-pta"});
  });
  return flags_;
}

HostCompiler::HostCompiler(HostCompilerOptions options)
    : options_(std::move(options)), cache_(options_.cache_dir) {}

HostCompiler& HostCompiler::shared() {
  static HostCompiler compiler;
  return compiler;
}

HostCompiler::Stats HostCompiler::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

const std::string& HostCompiler::compiler_identity() {
  std::call_once(identity_once_, [this] {
    std::vector<std::string> argv = options_.cxx;
    argv.push_back("--version");
    const ProcessResult r = run_process(argv);
    if (r.exit_code != 0)
      throw UserError("the host C++ compiler '" + join(options_.cxx) +
                      "' cannot be run (set METILE_HOST_CXX): " + r.output);
    identity_ = r.output;
  });
  return identity_;
}

const fs::path& HostCompiler::stdlib_dir() {
  std::call_once(stdlib_once_, [this] {
    // The cache's folder when it is trusted, else a private one of this process.
    const fs::path work = cache_.work_dir();
    if (work == cache_.dir()) cache_.remove_leftovers_of_dead_processes();
    const fs::path dir = work / ("stdlib-" + stdlib_bundle_hash());
    if (auto [part, why] = untrusted_part(dir); !part.empty()) {
      warn_untrusted_cache(part, why, "the headers are written again");
      std::error_code ignored;
      const fs::path aside = cache_.make_scratch_dir();
      fs::rename(dir, aside / "stdlib", ignored);
      fs::remove_all(aside, ignored);
    }
    if (!stdlib_intact(dir)) {
      // Written into a scratch directory and renamed, so a reader never sees a partial set;
      // a damaged copy (a truncated header) is moved aside first and replaced.
      const fs::path scratch = cache_.make_scratch_dir();
      for (const auto& f : embedded_stdlib_files()) {
        make_private_dirs(scratch, fs::path(f.path).parent_path());
        write_file_atomically(scratch / f.path, f.contents);
      }
      std::error_code ignored;
      // Checked again: another process may have renamed its good copy in since the first
      // check, and moving that aside would leave its readers without headers.
      if (fs::exists(dir) && (!stdlib_intact(dir) || !untrusted_part(dir).first.empty())) {
        const fs::path damaged = cache_.make_scratch_dir();
        fs::rename(dir, damaged / "stdlib", ignored);
        fs::remove_all(damaged, ignored);
      }
      std::error_code taken;  // another process may have renamed its copy first
      fs::rename(scratch, dir, taken);
      if (taken) fs::remove_all(scratch, ignored);
      if (!stdlib_intact(dir))
        throw UserError("the host kernel cache at " + cache_.dir().string() +
                        " keeps a damaged copy of the Metal standard library headers at " +
                        dir.string() + " (set METILE_CACHE_DIR, or delete that folder)");
    }
    stdlib_dir_ = dir;
  });
  return stdlib_dir_;
}

std::shared_ptr<const HostModule> HostCompiler::compile(std::string_view msl,
                                                        const codegen::KernelABI& abi) {
  std::string source = runs_as_workgroup(msl, options_.race_check) ? "" : kScalarMathPrefix;
  source += msl;
  source += "\n";
  source += generate_trampoline(abi, msl, options_.race_check);
  if (options_.race_check) source += race_check_hooks();
  const std::string flags = join(compiler_flags());  // sets native_isa_
  const std::string key =
      content_hash(source + '\0' + stdlib_bundle_hash() + '\0' + compiler_identity() + '\0' +
                   join(options_.cxx) + ' ' + flags + ' ' + join(options_.extra_flags) + '\0' +
                   native_isa_ + (options_.race_check ? ' ' + join(race_check_flags()) : ""));

  std::promise<std::shared_ptr<const HostModule>> promise;
  std::shared_future<std::shared_ptr<const HostModule>> future;
  bool builds_it = false;
  {
    std::lock_guard lock(mutex_);
    if (auto it = loaded_.find(key); it != loaded_.end()) {
      ++stats_.memory_hits;
      future = it->second;
    } else {
      future = promise.get_future().share();
      loaded_.emplace(key, future);
      builds_it = true;
    }
  }
  if (!builds_it) return future.get();  // waits for, or rethrows, the builder's result
  try {
    std::shared_ptr<const HostModule> module;
    try {
      module = load_or_build(key, source, abi.kernel_name);
    } catch (const fs::filesystem_error& e) {
      throw UserError("the host kernel cache at " + cache_.dir().string() +
                      " is not usable (set METILE_CACHE_DIR): " + e.what());
    }
    promise.set_value(module);
    return module;
  } catch (...) {
    {
      std::lock_guard lock(mutex_);
      loaded_.erase(key);  // a later call tries again
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

std::shared_ptr<const HostModule> HostCompiler::load_or_build(const std::string& key,
                                                              const std::string& source,
                                                              const std::string& kernel_name) {
  const std::string name = key + ".so";
  std::shared_ptr<const HostModule> module;
  std::string error;
  bool built = false;
  // An intact entry that does not load (another runtime ABI) is refused, and rebuilt.
  const auto load = [&](const fs::path& entry) {
    module = HostModule::load(entry, error);
    return module != nullptr;
  };
  const auto build = [&](const fs::path& scratch) {
    built = true;
    const fs::path cc = scratch / (key + ".cc"), object = scratch / name;
    write_file_atomically(cc, source);
    const fs::path compiled = options_.race_check ? scratch / (key + ".o") : object;
    std::vector<std::string> argv = options_.cxx;
    argv.insert(argv.end(), compiler_flags().begin(), compiler_flags().end());
    argv.insert(argv.end(), options_.extra_flags.begin(), options_.extra_flags.end());
    if (options_.race_check)
      argv.insert(argv.end(), race_check_flags().begin(), race_check_flags().end());
    for (std::string arg : {std::string("-I"), (stdlib_dir() / "include").string(),
                            std::string("-o"), compiled.string(), cc.string()})
      argv.push_back(std::move(arg));
    {
      std::lock_guard lock(mutex_);
      ++stats_.compiler_runs;
    }
    ProcessResult result = run_process(argv);
    if (result.exit_code == 0 && options_.race_check) {
      argv = options_.cxx;
      for (std::string arg :
           {std::string("-shared"), std::string("-o"), object.string(), compiled.string()})
        argv.push_back(std::move(arg));
      result = run_process(argv);
    }
    if (result.exit_code != 0) {
      const fs::path kept = cache_.work_dir() / "failed" / (key + ".cc");
      make_private_dir(kept.parent_path());
      fs::rename(cc, kept);
      throw InternalError("the host C++ compiler rejected the MSL of kernel '" + kernel_name +
                          "' (generated code must always compile); source kept at " +
                          kept.string() + "\ncommand: " + join(argv) + "\n" + result.output);
    }
    return object;
  };
  // Processes that compile the same kernel at once (the ranks of torchrun) build it once:
  // the others wait for the entry's lock and load what the first stored.
  if (!cache_.read_or_build(name, build, load))
    throw InternalError("cannot load the compiled kernel module: " + error);
  if (!built) {
    std::lock_guard lock(mutex_);
    ++stats_.disk_hits;
  }
  return module;
}

}  // namespace metile::runtime::host
