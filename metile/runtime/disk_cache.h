// A directory of immutable files named by content key. Entries are written to a
// temporary file and renamed into place, with a checksum beside them that names the entry
// and signs its bytes, so a crash or a concurrent writer never leaves a half-written entry
// that a reader would trust; a damaged entry (truncated, overwritten, another entry's files
// copied under this name) fails its checksum, is removed and reported as a miss. Any device keeps
// what it builds in one, under cache_root() / <device>.
//
// Trust: entries are code (the host device dlopens them), so only what this user wrote is
// used. The cache root (dir's parent) and dir are created owner-only (0700), entries, their
// checksums and every file written here owner-only (0600). The checksum is an HMAC-SHA256
// of the entry's name and bytes keyed by the per-user secret <cache root>/secret.key (32
// random bytes, 0600), the same key the Python trace cache signs with
// (python/metile/disk_cache.py), so an entry forged with a recomputed checksum by someone
// without the secret is rebuilt. A root or dir that is not the user's own or that group or
// others may write to, a secret that is not the user's own or that others may read, and an
// entry or checksum that is not a regular file of the user's own that only the user may
// write (opened without following symbolic links, checked with fstat) are refused with an
// "untrusted-cache" warning (metile/support/warnings.h) naming the path and the reason:
// an untrusted entry is removed and rebuilt; with an untrusted folder nothing there is
// read or written, and work_dir() is a private temporary folder of the process instead.
//
// Processes share a cache (the ranks of torchrun on one host compile the same kernels at
// once): read_or_build lets one process build an entry while the others wait on the entry's
// lock (<name>.lock, flock, released by the system when its holder dies, however it dies)
// and then read what it stored. Entries are only removed or replaced under that lock.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace metile::runtime {

// METILE_CACHE_DIR, else $XDG_CACHE_HOME/metile, else ~/.cache/metile (else a folder in
// the system temporary directory).
std::filesystem::path cache_root();

class DiskCache {
 public:
  // `dir` is a folder of the cache root dir.parent_path(), whose secret.key signs entries.
  explicit DiskCache(std::filesystem::path dir);
  const std::filesystem::path& dir() const { return dir_; }

  // Whether dir() can be used: the root and dir() are made owner-only when missing, then
  // checked with the secret (made when missing). Warns when not. Throws
  // std::filesystem::filesystem_error when they cannot be made (a file is in the way).
  bool trusted() const;
  // Where this process builds and keeps what it makes: dir() when trusted(), else a private
  // temporary folder of this process (0700, removed when the last copy of this cache goes).
  std::filesystem::path work_dir() const;

  // Makes `file` in a private scratch folder it is given and returns its path.
  using Builder = std::function<std::filesystem::path(const std::filesystem::path& scratch)>;
  // Reads (or loads) the entry at a path; false for one it cannot use (another ABI).
  using Reader = std::function<bool(const std::filesystem::path& entry)>;
  // Reads entry `name` with `read`. When it is missing, damaged or refused, takes the
  // entry's lock, looks again (another process may have stored it meanwhile), and otherwise
  // builds it, stores it and reads what it stored. False only when `read` refuses the entry
  // just built. In a cache that is not trusted, nothing is locked or stored: `read` gets
  // the built file.
  bool read_or_build(std::string_view name, const Builder& build, const Reader& read) const;

  // The entry's path when present, intact and trusted. A damaged entry is removed (under
  // its lock).
  std::optional<std::filesystem::path> find(std::string_view name) const;
  // Moves `file` into the cache as `name` and returns the entry's path; when dir() is not
  // trusted, `file` stays where it is and its own path is returned.
  std::filesystem::path store(std::string_view name, const std::filesystem::path& file) const;
  void remove(std::string_view name) const;
  // A fresh private directory (0700) for work in progress, under work_dir() (the cache's
  // filesystem when trusted).
  std::filesystem::path make_scratch_dir() const;
  // Removes the scratch folders and half-written files ("*.<pid>.<n>.tmp") of processes
  // that no longer run (killed while compiling).
  void remove_leftovers_of_dead_processes() const;

 private:
  struct State;
  // Why find_intact found no entry.
  enum class Miss { none, untrusted_folder, missing, damaged };
  // The entry's path when present, intact and trusted, else nullopt and `*miss` says why; a
  // damaged or untrusted entry is removed only with `remove_damaged` (by the holder of its
  // lock: a reader without it never removes what a builder is storing).
  std::optional<std::filesystem::path> find_intact(std::string_view name, bool remove_damaged,
                                                   Miss* miss = nullptr) const;

  std::filesystem::path dir_;
  std::shared_ptr<State> state_;
};

// Writes `contents` to `path` atomically (temporary file, owner-only, then rename).
void write_file_atomically(const std::filesystem::path& path, std::string_view contents);
std::optional<std::string> read_file(const std::filesystem::path& path);

// -- trust checks, shared by the caches of the devices -----------------------------------

// Creates the folder `path` owner-only (0700) when it is missing (its missing parents with
// the default permissions); a folder that exists is left as it is.
void make_private_dir(const std::filesystem::path& path);
// "" when `path` is a folder of this user's own that neither group nor others may write to,
// else why not ("it is owned by uid 12345, not by this user (uid 0)", ...; with
// `advise_chmod`, for a folder of the user's own, how to make it owner-only).
std::string untrusted_folder_reason(const std::filesystem::path& path, bool advise_chmod = true);
// "" when `path` itself (a symbolic link is not followed) is this user's own and neither
// group nor others may write to it, else why not ("it is a symbolic link", ...).
std::string untrusted_path_reason(const std::filesystem::path& path);
// The bytes of the regular file at `path`, opened without following a symbolic link, when
// it is this user's own and neither group nor others may write it (nor, with
// `private_to_user`, read it). nullopt when it is missing or unreadable, or (with `why` set
// to the reason) when it is not to be trusted.
std::optional<std::string> read_trusted_file(const std::filesystem::path& path, std::string* why,
                                             bool private_to_user = false);
// Reports an "untrusted-cache" warning: "metile: the compiled-object cache does not trust
// <path>: <reason>; <consequence>".
void warn_untrusted_cache(const std::filesystem::path& path, const std::string& reason,
                          const std::string& consequence);
// The per-user key of <root>/secret.key (32 bytes), made on first use (written to a
// temporary file and linked into place, so racing processes agree on one key). nullopt,
// with `why`, when it is not the user's own, others may read it, or it is no key.
std::optional<std::string> cache_secret(const std::filesystem::path& root, std::string* why);

}  // namespace metile::runtime
