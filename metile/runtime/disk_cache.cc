#include "metile/runtime/disk_cache.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

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
// The checksum file names its entry as well as hashing it, so another entry's file and
// checksum copied under this name do not pass.
std::string checksum_of(std::string_view name, const std::string& bytes) {
  return std::string(name) + "\n" + content_hash(bytes);
}

bool process_alive(pid_t pid) {
  return kill(pid, 0) == 0 || errno == EPERM;
}

// "<anything>.<pid>.<n>.tmp" (scratch folders and files being written): the pid, or 0.
pid_t writer_of(const std::string& name) {
  constexpr std::string_view suffix = ".tmp";
  if (name.size() <= suffix.size() || name.compare(name.size() - 4, 4, suffix) != 0) return 0;
  const std::string stem = name.substr(0, name.size() - suffix.size());
  const size_t counter_dot = stem.rfind('.');
  if (counter_dot == std::string::npos || counter_dot == 0) return 0;
  const size_t pid_dot = stem.rfind('.', counter_dot - 1);
  if (pid_dot == std::string::npos) return 0;
  const std::string pid = stem.substr(pid_dot + 1, counter_dot - pid_dot - 1);
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9)
    return 0;
  return static_cast<pid_t>(std::stol(pid));
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
  if (!sum || *sum != checksum_of(name, *bytes)) {
    remove(name);
    return std::nullopt;
  }
  return entry;
}

fs::path DiskCache::store(std::string_view name, const fs::path& file) const {
  const fs::path entry = dir_ / name;
  const auto bytes = read_file(file);
  if (!bytes) throw UserError("cannot read " + file.string());
  write_file_atomically(checksum_path(entry), checksum_of(name, *bytes));
  fs::rename(file, entry);
  return entry;
}

void DiskCache::remove(std::string_view name) const {
  std::error_code ignored;
  fs::remove(dir_ / name, ignored);
  fs::remove(checksum_path(dir_ / name), ignored);
}

void DiskCache::remove_leftovers_of_dead_processes() const {
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const pid_t pid = writer_of(it->path().filename().string());
    if (pid > 0 && pid != getpid() && !process_alive(pid)) {
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
}

fs::path DiskCache::make_scratch_dir() const {
  const fs::path scratch = dir_ / ("scratch" + unique_suffix());
  fs::create_directories(scratch);
  return scratch;
}

}  // namespace metile::runtime
