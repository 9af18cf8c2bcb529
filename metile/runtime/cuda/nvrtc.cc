#include "metile/runtime/cuda/nvrtc.h"

#include <cstdlib>
#include <filesystem>

#include "metile/support/errors.h"

namespace metile::runtime::cuda {

namespace {
constexpr int kNvrtcSuccess = 0;
}  // namespace

std::string gpu_architecture(int major, int minor, NvrtcOutput output) {
  const std::string digits = std::to_string(major) + std::to_string(minor);
  const std::string suffix = major == 9 && minor == 0 ? "a" : "";
  return (output == NvrtcOutput::Cubin ? "sm_" : "compute_") + digits + suffix;
}

std::string cuda_include_dir() {
  std::vector<std::string> candidates = {"/usr/local/cuda/include",
                                         "/usr/local/cuda/targets/x86_64-linux/include"};
  if (const char* dir = std::getenv("METILE_CUDA_INCLUDE"); dir && *dir) candidates = {dir};
  std::error_code ignored;
  for (const std::string& dir : candidates)
    if (std::filesystem::exists(std::filesystem::path(dir) / "cuda_fp16.h", ignored)) return dir;
  return "";
}

std::vector<std::string> nvrtc_options(const std::string& architecture) {
  std::vector<std::string> options = {"--gpu-architecture=" + architecture, "-std=c++17",
                                      "-default-device"};
  if (const std::string include = cuda_include_dir(); !include.empty())
    options.push_back("-I" + include);
  return options;
}

std::vector<std::string> Nvrtc::default_candidates() {
  return SharedLibrary::candidates(
      "METILE_NVRTC_LIBRARY",
      {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so",
       "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so"});
}

const Nvrtc* Nvrtc::shared(std::string* why) {
  return load_once<Nvrtc>(why);
}

std::unique_ptr<Nvrtc> Nvrtc::load(const std::vector<std::string>& candidates, std::string& why) {
  std::unique_ptr<Nvrtc> n(new Nvrtc);
  n->library_ = SharedLibrary::open(candidates, why);
  if (!n->library_.valid()) return nullptr;
  std::string missing;
  const SharedLibrary& lib = n->library_;
  bind_symbol(lib, "nvrtcGetErrorString", n->get_error_string_, missing);
  bind_symbol(lib, "nvrtcVersion", n->version_, missing);
  bind_symbol(lib, "nvrtcCreateProgram", n->create_program_, missing);
  bind_symbol(lib, "nvrtcCompileProgram", n->compile_program_, missing);
  bind_symbol(lib, "nvrtcDestroyProgram", n->destroy_program_, missing);
  bind_symbol(lib, "nvrtcGetProgramLogSize", n->get_log_size_, missing);
  bind_symbol(lib, "nvrtcGetProgramLog", n->get_log_, missing);
  bind_symbol(lib, "nvrtcGetCUBINSize", n->get_cubin_size_, missing);
  bind_symbol(lib, "nvrtcGetCUBIN", n->get_cubin_, missing);
  bind_symbol(lib, "nvrtcGetPTXSize", n->get_ptx_size_, missing);
  bind_symbol(lib, "nvrtcGetPTX", n->get_ptx_, missing);
  if (!missing.empty()) {
    why = lib.path() + " lacks " + missing;
    return nullptr;
  }
  return n;
}

std::string Nvrtc::version() const {
  int major = 0, minor = 0;
  check(version_(&major, &minor), "nvrtcVersion", "");
  return std::to_string(major) + "." + std::to_string(minor);
}

void Nvrtc::check(Result result, const char* call, const std::string& name) const {
  if (result == kNvrtcSuccess) return;
  throw InternalError(std::string(call) + " failed: " + get_error_string_(result) +
                      (name.empty() ? "" : " [kernel " + name + "]"));
}

std::string Nvrtc::compile(std::string_view source, const std::string& name,
                           const std::vector<std::string>& options, NvrtcOutput output) const {
  const std::string text(source);
  Program program = nullptr;
  check(create_program_(&program, text.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr),
        "nvrtcCreateProgram", name);
  // The program is destroyed on every path out.
  struct Destroy {
    const Nvrtc& nvrtc;
    Program& program;
    ~Destroy() { nvrtc.destroy_program_(&program); }
  } destroy{*this, program};

  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  const Result compiled = compile_program_(program, static_cast<int>(argv.size()), argv.data());
  if (compiled != kNvrtcSuccess) {
    std::size_t log_size = 0;
    std::string log;
    if (get_log_size_(program, &log_size) == kNvrtcSuccess && log_size > 1) {
      log.resize(log_size);
      get_log_(program, log.data());
      log.resize(log_size - 1);  // the terminating NUL
    }
    std::string flags;
    for (const std::string& o : options) flags += " " + o;
    throw InternalError("NVRTC could not compile the emitted CUDA source of kernel '" + name +
                        "' (" + get_error_string_(compiled) + "); options:" + flags + "\n" + log +
                        "\n--- source ---\n" + text);
  }
  const bool cubin = output == NvrtcOutput::Cubin;
  std::size_t size = 0;
  check(cubin ? get_cubin_size_(program, &size) : get_ptx_size_(program, &size),
        cubin ? "nvrtcGetCUBINSize" : "nvrtcGetPTXSize", name);
  std::string binary(size, '\0');
  check(cubin ? get_cubin_(program, binary.data()) : get_ptx_(program, binary.data()),
        cubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX", name);
  if (!cubin && !binary.empty() && binary.back() == '\0') binary.pop_back();
  return binary;
}

}  // namespace metile::runtime::cuda
