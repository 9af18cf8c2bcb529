// NVRTC, the CUDA run-time compiler, loaded with dlopen (libnvrtc.so.13, libnvrtc.so, or
// under /usr/local/cuda; METILE_NVRTC_LIBRARY names one file instead). The few NVRTC types
// and functions used are declared here, so meTile needs no CUDA headers to build.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "metile/runtime/cuda/shared_library.h"

namespace metile::runtime::cuda {

enum class NvrtcOutput { Cubin, Ptx };

// The architecture NVRTC compiles for, from a compute capability: sm_90a for a cubin on
// Hopper (the arch-specific 'a' variant, which wgmma needs), compute_90a for its PTX;
// other capabilities without the suffix (sm_80, compute_80).
std::string gpu_architecture(int major, int minor, NvrtcOutput output);

// The CUDA headers folder (for cuda_fp16.h / cuda_bf16.h), or "" when none is found:
// METILE_CUDA_INCLUDE, else /usr/local/cuda/include, else the x86_64 targets folder.
std::string cuda_include_dir();

// The options every emitted kernel is compiled with. Never --use_fast_math: precision is
// the dialect's decision, written into the source.
std::vector<std::string> nvrtc_options(const std::string& architecture);

class Nvrtc {
 public:
  // The process-wide NVRTC, loaded on first use; nullptr and `why` set when it cannot load.
  static const Nvrtc* shared(std::string* why = nullptr);
  // Loads NVRTC from `candidates`; nullptr and `why` set when none loads or one lacks a
  // function meTile calls.
  static std::unique_ptr<Nvrtc> load(const std::vector<std::string>& candidates, std::string& why);
  static std::vector<std::string> default_candidates();

  const std::string& path() const { return library_.path(); }
  // "13.0"
  std::string version() const;
  // Compiles `source` (the program named `name`) with `options` to a cubin or PTX. A
  // compile error is an InternalError carrying NVRTC's log and the source: meTile emitted
  // source that does not compile.
  std::string compile(std::string_view source, const std::string& name,
                      const std::vector<std::string>& options, NvrtcOutput output) const;

 private:
  using Program = struct NvrtcProgramOpaque*;
  using Result = int;
  SharedLibrary library_;
  const char* (*get_error_string_)(Result) = nullptr;
  Result (*version_)(int*, int*) = nullptr;
  Result (*create_program_)(Program*, const char*, const char*, int, const char* const*,
                            const char* const*) = nullptr;
  Result (*compile_program_)(Program, int, const char* const*) = nullptr;
  Result (*destroy_program_)(Program*) = nullptr;
  Result (*get_log_size_)(Program, std::size_t*) = nullptr;
  Result (*get_log_)(Program, char*) = nullptr;
  Result (*get_cubin_size_)(Program, std::size_t*) = nullptr;
  Result (*get_cubin_)(Program, char*) = nullptr;
  Result (*get_ptx_size_)(Program, std::size_t*) = nullptr;
  Result (*get_ptx_)(Program, char*) = nullptr;

  void check(Result result, const char* call, const std::string& name) const;
};

}  // namespace metile::runtime::cuda
