#include "metile/runtime/cuda/cubin_cache.h"

#include <optional>

#include "metile/support/errors.h"
#include "metile/support/hash.h"

namespace metile::runtime::cuda {

std::string cubin_cache_key(std::string_view source, const std::vector<std::string>& options,
                            std::string_view nvrtc_version, std::string_view architecture) {
  std::string identity =
      "nvrtc " + std::string(nvrtc_version) + "\narch " + std::string(architecture) + "\n";
  for (const std::string& o : options) identity += "option " + o + "\n";
  identity += "source\n";
  identity += source;
  return content_hash(identity) + ".cubin";
}

CubinCache& CubinCache::shared() {
  static CubinCache cache(cache_root() / "cuda");
  return cache;
}

std::string CubinCache::get_or_build(const std::string& key,
                                     const std::function<std::string()>& build, bool* hit) const {
  std::optional<std::string> cubin;
  bool built = false;
  const auto read = [&](const std::filesystem::path& entry) {
    std::string why;
    cubin = read_trusted_file(entry, &why);
    return cubin.has_value();
  };
  // Built in a private scratch folder and moved into place atomically by the cache; ranks
  // compiling the same kernel at once build it once (DiskCache::read_or_build).
  const auto write = [&](const std::filesystem::path& scratch) {
    built = true;
    cubin = build();
    write_file_atomically(scratch / key, *cubin);
    return scratch / key;
  };
  try {
    cache_.read_or_build(key, write, read);
  } catch (const std::filesystem::filesystem_error&) {
    // a cache folder that cannot be made or written: built here, not stored
  } catch (const UserError&) {
    if (!cubin || !built) throw;  // NVRTC's error, not the cache's
  }
  if (!cubin) {
    cubin = build();
    built = true;
  }
  if (hit) *hit = !built;
  return *cubin;
}

}  // namespace metile::runtime::cuda
