#include "metile/runtime/cuda/shared_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <utility>

namespace metile::runtime::cuda {

std::vector<std::string> SharedLibrary::candidates(const char* override_env,
                                                   std::vector<std::string> defaults) {
  if (const char* path = std::getenv(override_env); path && *path) return {path};
  return defaults;
}

SharedLibrary SharedLibrary::open(const std::vector<std::string>& candidates, std::string& why) {
  why.clear();
  for (const std::string& path : candidates) {
    dlerror();
    if (void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      SharedLibrary library;
      library.handle_ = handle;
      library.path_ = path;
      return library;
    }
    const char* error = dlerror();
    why += (why.empty() ? "" : "; ") + path + ": " + (error ? error : "dlopen failed");
  }
  if (candidates.empty()) why = "no candidate path";
  return {};
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  std::swap(handle_, other.handle_);
  std::swap(path_, other.path_);
  return *this;
}

// The CUDA libraries stay loaded until the process exits: the driver's own teardown runs
// at exit and must find its code mapped, so an opened library is never dlclose'd.
SharedLibrary::~SharedLibrary() = default;

void* SharedLibrary::symbol(const char* name) const {
  return handle_ ? dlsym(handle_, name) : nullptr;
}

}  // namespace metile::runtime::cuda
