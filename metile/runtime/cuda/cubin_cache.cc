#include "metile/runtime/cuda/cubin_cache.h"

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
  try {
    if (const auto entry = cache_.find(key)) {
      std::string why;
      if (auto bytes = read_trusted_file(*entry, &why)) {
        if (hit) *hit = true;
        return *bytes;
      }
    }
  } catch (const std::filesystem::filesystem_error&) {
    // a cache folder that cannot be made: built, and not stored
  }
  if (hit) *hit = false;
  std::string cubin = build();
  std::error_code ignored;
  // Written to a private scratch file first; store() moves it into place atomically (in a
  // cache that is not trusted, nothing is stored). A cache that cannot be written only
  // costs the next process a rebuild.
  try {
    const std::filesystem::path scratch = cache_.make_scratch_dir();
    write_file_atomically(scratch / key, cubin);
    cache_.store(key, scratch / key);
    std::filesystem::remove_all(scratch, ignored);
  } catch (const std::filesystem::filesystem_error&) {
  } catch (const UserError&) {
  }
  return cubin;
}

}  // namespace metile::runtime::cuda
