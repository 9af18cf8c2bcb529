// A directory of immutable files named by content key. Entries are written to a
// temporary file and renamed into place, with a checksum beside them that names the entry
// and hashes its bytes, so a crash or a concurrent writer never leaves a half-written entry
// that a reader would trust; a damaged entry (truncated, overwritten, another entry's files
// copied under this name) fails its checksum, is removed and reported as a miss. Any device keeps
// what it builds in one, under cache_root() / <device>.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace metile::runtime {

// METILE_CACHE_DIR, else $XDG_CACHE_HOME/metile, else ~/.cache/metile (else a folder in
// the system temporary directory).
std::filesystem::path cache_root();

class DiskCache {
 public:
  explicit DiskCache(std::filesystem::path dir);
  const std::filesystem::path& dir() const { return dir_; }

  // The entry's path when present and intact.
  std::optional<std::filesystem::path> find(std::string_view name) const;
  // Moves `file` into the cache as `name`; returns the entry's path.
  std::filesystem::path store(std::string_view name, const std::filesystem::path& file) const;
  void remove(std::string_view name) const;
  // A fresh private directory for work in progress (under the cache, same filesystem).
  std::filesystem::path make_scratch_dir() const;
  // Removes the scratch folders and half-written files ("*.<pid>.<n>.tmp") of processes
  // that no longer run (killed while compiling).
  void remove_leftovers_of_dead_processes() const;

 private:
  std::filesystem::path dir_;
};

// Writes `contents` to `path` atomically (temporary file + rename).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace metile::runtime
