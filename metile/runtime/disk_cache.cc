#include "metile/runtime/disk_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "metile/support/errors.h"
#include "metile/support/hash.h"

namespace metile::runtime {

namespace fs = std::filesystem;

namespace {
std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return "." + std::to_string(getpid()) + "." + std::to_string(counter++) + ".tmp";
}
fs::path checksum_path(const fs::path& entry) {
  return entry.string() + ".sum";
}
}  // namespace

fs::path cache_root() {
  if (const char* dir = std::getenv("METILE_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return fs::path(xdg) / "metile";
  if (const char* home = std::getenv("HOME"); home && *home)
    return fs::path(home) / ".cache" / "metile";
  return fs::temp_directory_path() / "metile-cache";
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_file_atomically(const fs::path& path, std::string_view contents) {
  const fs::path tmp = path.string() + unique_suffix();
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    if (!out.flush()) throw UserError("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

DiskCache::DiskCache(fs::path dir) : dir_(std::move(dir)) {}

std::optional<fs::path> DiskCache::find(std::string_view name) const {
  const fs::path entry = dir_ / name;
  const auto bytes = read_file(entry);
  if (!bytes) return std::nullopt;
  const auto sum = read_file(checksum_path(entry));
  if (!sum || *sum != content_hash(*bytes)) {
    remove(name);
    return std::nullopt;
  }
  return entry;
}

fs::path DiskCache::store(std::string_view name, const fs::path& file) const {
  const fs::path entry = dir_ / name;
  const auto bytes = read_file(file);
  if (!bytes) throw UserError("cannot read " + file.string());
  write_file_atomically(checksum_path(entry), content_hash(*bytes));
  fs::rename(file, entry);
  return entry;
}

void DiskCache::remove(std::string_view name) const {
  std::error_code ignored;
  fs::remove(dir_ / name, ignored);
  fs::remove(checksum_path(dir_ / name), ignored);
}

fs::path DiskCache::make_scratch_dir() const {
  const fs::path scratch = dir_ / ("scratch" + unique_suffix());
  fs::create_directories(scratch);
  return scratch;
}

}  // namespace metile::runtime
