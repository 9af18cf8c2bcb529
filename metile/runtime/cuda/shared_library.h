// A shared library opened with dlopen from a list of candidate paths. The CUDA device
// loads libcuda and libnvrtc this way so that meTile builds and runs without CUDA; when
// none of the candidates loads, the reason lists every path tried and dlopen's answer.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace metile::runtime::cuda {

class SharedLibrary {
 public:
  // The candidates to try, in order: `override_env`'s value alone when that variable is
  // set (tests point it at a missing file), else `defaults`.
  static std::vector<std::string> candidates(const char* override_env,
                                             std::vector<std::string> defaults);
  // Opens the first candidate that loads; an invalid library and `why` set otherwise.
  static SharedLibrary open(const std::vector<std::string>& candidates, std::string& why);

  SharedLibrary() = default;
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  ~SharedLibrary();

  bool valid() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }
  // The symbol `name`, or nullptr.
  void* symbol(const char* name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
};

// Looks up `name` in `library` into `fn`; false (and `missing` extended) when absent.
template <class Fn>
bool bind_symbol(const SharedLibrary& library, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(library.symbol(name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

// The process-wide `Api::load(Api::default_candidates(), ...)`, loaded once on first use;
// nullptr and `why` (when given) set to the load error when it cannot load.
template <class Api>
const Api* load_once(std::string* why) {
  static std::once_flag once;
  static std::unique_ptr<Api> api;
  static std::string load_error;
  std::call_once(once, [] { api = Api::load(Api::default_candidates(), load_error); });
  if (!api && why) *why = load_error;
  return api.get();
}

}  // namespace metile::runtime::cuda
