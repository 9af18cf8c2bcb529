#include "metile/runtime/disk_cache.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <system_error>

#include "metile/support/errors.h"
#include "metile/support/sha256.h"
#include "metile/support/warnings.h"

namespace metile::runtime {

namespace fs = std::filesystem;

namespace {

constexpr size_t kSecretBytes = 32;
constexpr const char* kSecretName = "secret.key";

std::string unique_suffix() {
  static std::atomic<unsigned> counter{0};
  return "." + std::to_string(getpid()) + "." + std::to_string(counter++) + ".tmp";
}
fs::path checksum_path(const fs::path& entry) {
  return entry.string() + ".sum";
}
// The checksum file names its entry and holds an HMAC-SHA256 of the name and the bytes
// under the user's secret: another entry's file and checksum copied under this name do not
// pass, and nobody without the secret can make a checksum that does.
std::string checksum_of(std::string_view name, const std::string& bytes, const std::string& key) {
  std::string message(name);
  message += '\0';
  message += bytes;
  return std::string(name) + "\nhmac-sha256 " + to_hex(hmac_sha256(key, message)) + "\n";
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

std::string octal_mode(mode_t mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%o", static_cast<unsigned>(mode & 07777));
  return text;
}

// "" when `status` is this user's own and grants group and others none of `forbidden`.
std::string ownership_reason(const struct stat& status, mode_t forbidden, const char* allowed) {
  const uid_t user = geteuid();
  if (status.st_uid != user)
    return "it is owned by uid " + std::to_string(status.st_uid) + ", not by this user (uid " +
           std::to_string(user) + ")";
  if (status.st_mode & forbidden)
    return std::string("group or others may ") + allowed + " it (mode " +
           octal_mode(status.st_mode) + ")";
  return "";
}

[[noreturn]] void throw_errno(const std::string& what, const fs::path& path) {
  throw fs::filesystem_error(what, path, std::error_code(errno, std::generic_category()));
}

// Removes a file, never following a link: the link itself goes.
void unlink_quietly(const fs::path& path) {
  ::unlink(path.c_str());
}

std::optional<std::string> read_descriptor(int fd) {
  std::string bytes;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n == 0) return bytes;
    if (n < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    bytes.append(chunk, static_cast<size_t>(n));
  }
}

bool write_descriptor(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

std::optional<std::string> random_bytes(size_t count) {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  std::string bytes(count, '\0');
  if (!urandom.read(bytes.data(), static_cast<std::streamsize>(count))) return std::nullopt;
  return bytes;
}

// Writes a new secret, unless another process made one first.
void make_secret(const fs::path& path) {
  const auto key = random_bytes(kSecretBytes);
  if (!key) return;
  const fs::path temporary = path.string() + unique_suffix();
  unlink_quietly(temporary);
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return;
  const bool written = write_descriptor(fd, *key);
  ::close(fd);
  // link() is atomic and never replaces another process's secret; without hard links a
  // racing process's entries are compiled again.
  if (written && ::link(temporary.c_str(), path.c_str()) != 0 && errno != EEXIST)
    ::rename(temporary.c_str(), path.c_str());
  unlink_quietly(temporary);
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
  unlink_quietly(tmp);  // a leftover of a dead process with this pid, or a planted link
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw UserError("cannot write " + tmp.string() + ": " + std::strerror(errno));
  const bool written = write_descriptor(fd, contents);
  if (::close(fd) != 0 || !written) {
    unlink_quietly(tmp);
    throw UserError("cannot write " + tmp.string());
  }
  fs::rename(tmp, path);
}

void make_private_dir(const fs::path& path) {
  struct stat status;
  if (::stat(path.c_str(), &status) == 0) {
    if (!S_ISDIR(status.st_mode))
      throw fs::filesystem_error("not a folder", path,
                                 std::make_error_code(std::errc::not_a_directory));
    return;
  }
  if (path.has_parent_path() && path.parent_path() != path)
    fs::create_directories(path.parent_path());
  if (::mkdir(path.c_str(), 0700) == 0) {
    // Exactly 0700, whatever the umask.
    if (::chmod(path.c_str(), 0700) != 0) throw_errno("cannot make owner-only", path);
    return;
  }
  if (errno == EEXIST && fs::is_directory(path)) return;  // another process made it
  throw_errno("cannot create", path);
}

std::string untrusted_folder_reason(const fs::path& path, bool advise_chmod) {
  struct stat status;
  if (::stat(path.c_str(), &status) != 0) return "it cannot be examined";
  if (!S_ISDIR(status.st_mode)) return "it is not a folder";
  std::string why = ownership_reason(status, S_IWGRP | S_IWOTH, "write to");
  if (advise_chmod && !why.empty() && status.st_uid == geteuid())
    why += "; make it owner-only (chmod 700 " + path.string() + ") to use the cache";
  return why;
}

std::string untrusted_path_reason(const fs::path& path) {
  struct stat status;
  if (::lstat(path.c_str(), &status) != 0) return "it cannot be examined";
  if (S_ISLNK(status.st_mode)) return "it is a symbolic link";
  return ownership_reason(status, S_IWGRP | S_IWOTH, "write to");
}

std::optional<std::string> read_trusted_file(const fs::path& path, std::string* why,
                                             bool private_to_user) {
  why->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) *why = "it is a symbolic link";
    return std::nullopt;
  }
  struct stat status;
  std::optional<std::string> bytes;
  if (::fstat(fd, &status) != 0) {
    *why = "it cannot be examined";
  } else if (!S_ISREG(status.st_mode)) {
    *why = "it is not a regular file";
  } else {
    *why = private_to_user ? ownership_reason(status, S_IRWXG | S_IRWXO, "read or write")
                           : ownership_reason(status, S_IWGRP | S_IWOTH, "write to");
    if (why->empty()) bytes = read_descriptor(fd);
  }
  ::close(fd);
  return bytes;
}

void warn_untrusted_cache(const fs::path& path, const std::string& reason,
                          const std::string& consequence) {
  warn(Warning{"untrusted-cache", path.string(), reason,
               "metile: the compiled-object cache does not trust " + path.string() + ": " + reason +
                   "; " + consequence});
}

std::optional<std::string> cache_secret(const fs::path& root, std::string* why) {
  const fs::path path = root / kSecretName;
  std::optional<std::string> key = read_trusted_file(path, why, /*private_to_user=*/true);
  if (!key && why->empty()) {
    make_secret(path);
    key = read_trusted_file(path, why, /*private_to_user=*/true);
  }
  if (key && key->size() != kSecretBytes) {
    *why = "it is not a key of " + std::to_string(kSecretBytes) +
           " bytes (remove it to make a new one)";
    return std::nullopt;
  }
  return key;
}

// -- DiskCache --------------------------------------------------------------------------

struct DiskCache::State {
  std::mutex mutex;
  fs::path fallback;  // the private temporary folder, once made
  ~State() {
    std::error_code ignored;
    if (!fallback.empty()) fs::remove_all(fallback, ignored);
  }
};

DiskCache::DiskCache(fs::path dir) : dir_(std::move(dir)), state_(std::make_shared<State>()) {}

namespace {
constexpr const char* kCompiledPrivately =
    "nothing there is used, and kernels are compiled in a private temporary folder instead";

// The cache's secret when the root, `dir` and the secret are trusted (warning otherwise).
std::optional<std::string> trusted_key(const fs::path& dir) {
  const fs::path root = dir.parent_path();
  for (const fs::path& folder : {root, dir}) {
    make_private_dir(folder);  // checked first: nothing is made inside an untrusted root
    const std::string why = untrusted_folder_reason(folder);
    if (!why.empty()) {
      warn_untrusted_cache(folder, why, kCompiledPrivately);
      return std::nullopt;
    }
  }
  std::string why;
  std::optional<std::string> key = cache_secret(root, &why);
  if (!key && !why.empty()) warn_untrusted_cache(root / kSecretName, why, kCompiledPrivately);
  return key;
}
}  // namespace

bool DiskCache::trusted() const {
  return trusted_key(dir_).has_value();
}

fs::path DiskCache::work_dir() const {
  if (trusted()) return dir_;
  std::lock_guard lock(state_->mutex);
  if (state_->fallback.empty()) {
    std::string pattern =
        (fs::temp_directory_path() / ("metile-" + std::to_string(geteuid()) + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw_errno("cannot create a private folder", pattern);
    state_->fallback = pattern;
  }
  return state_->fallback;
}

std::optional<fs::path> DiskCache::find_intact(std::string_view name, bool remove_damaged,
                                               Miss* miss) const {
  Miss ignored;
  if (!miss) miss = &ignored;
  *miss = Miss::untrusted_folder;
  const std::optional<std::string> key = trusted_key(dir_);
  if (!key) return std::nullopt;
  *miss = Miss::damaged;
  const fs::path entry = dir_ / name;
  std::string why;
  const std::optional<std::string> bytes = read_trusted_file(entry, &why);
  if (!bytes) {
    if (why.empty()) {
      *miss = Miss::missing;
    } else if (remove_damaged) {
      warn_untrusted_cache(entry, why, "it is removed and the kernel compiled again");
      remove(name);
    }
    return std::nullopt;
  }
  const fs::path sum_path = checksum_path(entry);
  const std::optional<std::string> sum = read_trusted_file(sum_path, &why);
  if (!sum || !equal_in_constant_time(*sum, checksum_of(name, *bytes, *key))) {
    if (remove_damaged) {
      if (!sum && !why.empty())
        warn_untrusted_cache(sum_path, why, "its entry is removed and the kernel compiled again");
      remove(name);
    }
    return std::nullopt;
  }
  *miss = Miss::none;
  return entry;
}

namespace {
// An exclusive flock of <dir>/<name>.lock while one process builds entry `name`; the
// system releases it when the holder exits, however it exits. Without a lock file (a
// read-only or odd filesystem) builders race, which costs compile time, not correctness:
// entries are renamed into place whole.
class EntryLock {
 public:
  explicit EntryLock(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600)) {
    while (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~EntryLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

 private:
  int fd_;
};

fs::path lock_path(const fs::path& dir, std::string_view name) {
  return dir / (std::string(name) + ".lock");
}
}  // namespace

std::optional<fs::path> DiskCache::find(std::string_view name) const {
  Miss miss = Miss::none;
  if (auto entry = find_intact(name, /*remove_damaged=*/false, &miss)) return entry;
  if (miss != Miss::damaged) return std::nullopt;
  EntryLock lock(lock_path(dir_, name));
  return find_intact(name, /*remove_damaged=*/true);
}

bool DiskCache::read_or_build(std::string_view name, const Builder& build,
                              const Reader& read) const {
  Miss miss = Miss::none;
  if (auto entry = find_intact(name, /*remove_damaged=*/false, &miss); entry && read(*entry))
    return true;
  std::optional<EntryLock> lock;
  if (miss != Miss::untrusted_folder) {
    lock.emplace(lock_path(dir_, name));
    // Another process may have stored it while this one waited for the lock.
    if (auto entry = find_intact(name, /*remove_damaged=*/true)) {
      if (read(*entry)) return true;
      remove(name);  // intact but refused: built again
    }
  }
  const fs::path scratch = make_scratch_dir();
  struct RemovedAtExit {
    const fs::path& folder;
    ~RemovedAtExit() {
      std::error_code ignored;
      fs::remove_all(folder, ignored);
    }
  } removed{scratch};
  return read(store(name, build(scratch)));
}

fs::path DiskCache::store(std::string_view name, const fs::path& file) const {
  const std::optional<std::string> key = trusted_key(dir_);
  if (!key) return file;
  const fs::path entry = dir_ / name;
  const auto bytes = read_file(file);
  if (!bytes) throw UserError("cannot read " + file.string());
  write_file_atomically(checksum_path(entry), checksum_of(name, *bytes, *key));
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
  fs::rename(file, entry);
  return entry;
}

void DiskCache::remove(std::string_view name) const {
  unlink_quietly(dir_ / name);
  unlink_quietly(checksum_path(dir_ / name));
}

void DiskCache::remove_leftovers_of_dead_processes() const {
  if (!trusted()) return;
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
  const fs::path scratch = work_dir() / ("scratch" + unique_suffix());
  make_private_dir(scratch);
  return scratch;
}

}  // namespace metile::runtime
