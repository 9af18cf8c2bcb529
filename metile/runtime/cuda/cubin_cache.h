// The on-disk cache of cubins the cuda device built, under cache_root() / "cuda". An
// entry is named by the hash of everything that decides the cubin's bytes: the source,
// the NVRTC options, NVRTC's version and the architecture. It is a DiskCache, so writes
// are atomic and a damaged entry is rebuilt. It needs no GPU (tests run it anywhere).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "metile/runtime/disk_cache.h"

namespace metile::runtime::cuda {

std::string cubin_cache_key(std::string_view source, const std::vector<std::string>& options,
                            std::string_view nvrtc_version, std::string_view architecture);

class CubinCache {
 public:
  explicit CubinCache(std::filesystem::path dir) : cache_(std::move(dir)) {}
  // cache_root() / "cuda"
  static CubinCache& shared();

  // The cubin stored under `key`, else the one `build` returns, stored under `key`.
  // `hit` tells which.
  std::string get_or_build(const std::string& key, const std::function<std::string()>& build,
                           bool* hit = nullptr) const;
  const std::filesystem::path& dir() const { return cache_.dir(); }

 private:
  DiskCache cache_;
};

}  // namespace metile::runtime::cuda
