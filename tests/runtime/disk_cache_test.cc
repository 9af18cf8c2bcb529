// The compiled-object cache trusts only what this user wrote (issue 34): SHA-256 and
// HMAC-SHA256 against the FIPS 180 examples and the RFC 4231 test vectors; folders, entries
// and the secret owner-only; an entry forged with a recomputed checksum, an entry or
// checksum another user owns or others may write, a symbolic link, a folder others may
// write to and a secret others may read are refused (the last five with a warning naming the
// path and the reason).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "captured_warnings.h"
#include "metile/runtime/disk_cache.h"
#include "metile/support/hash.h"
#include "metile/support/sha256.h"

namespace metile::runtime::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr uid_t kForeignUid = 12345;

// -- SHA-256 and HMAC-SHA256 -------------------------------------------------------------

TEST(Sha256, FipsExamples) {
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecewiseUpdatesHashAsOne) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += char(i * 7);
  for (size_t split : {0, 1, 55, 56, 63, 64, 65, 127, 128, 999}) {
    Sha256 h;
    h.update(std::string_view(data).substr(0, split));
    h.update(std::string_view(data).substr(split));
    EXPECT_EQ(to_hex(h.finish()), to_hex(sha256(data))) << split;
  }
}

struct HmacCase {
  std::string key, data, expected;  // expected: hex, possibly truncated (case 5)
};

TEST(HmacSha256, Rfc4231TestVectors) {
  std::string key4;
  for (int i = 1; i <= 25; ++i) key4 += char(i);
  const std::vector<HmacCase> cases = {
      {std::string(20, '\x0b'), "Hi There",
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?",
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::string(20, '\xaa'), std::string(50, '\xdd'),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {key4, std::string(50, '\xcd'),
       "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {std::string(20, '\x0c'), "Test With Truncation", "a3b6167473100ee06e0c796c2955552b"},
      {std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {std::string(131, '\xaa'),
       "This is a test using a larger than block-size key and a larger than block-size data. "
       "The key needs to be hashed before being used by the HMAC algorithm.",
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const HmacCase& c = cases[i];
    EXPECT_EQ(to_hex(hmac_sha256(c.key, c.data)).substr(0, c.expected.size()), c.expected)
        << "RFC 4231 test case " << i + 1;
  }
}

TEST(HmacSha256, ConstantTimeComparison) {
  EXPECT_TRUE(equal_in_constant_time("abc", "abc"));
  EXPECT_FALSE(equal_in_constant_time("abc", "abd"));
  EXPECT_FALSE(equal_in_constant_time("abc", "ab"));
}

// -- the cache's trust checks ------------------------------------------------------------

mode_t mode_of(const fs::path& p) {
  struct stat s;
  EXPECT_EQ(::lstat(p.c_str(), &s), 0) << p;
  return s.st_mode & 07777;
}

class TrustedDiskCache : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("metile-disk-cache-test-" + std::to_string(getpid()));
    dir_ = root_ / "objects";
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Stores `bytes` as `name` as a device does: written in a scratch folder, then stored.
  static fs::path put(const DiskCache& cache, const std::string& name, const std::string& bytes) {
    const fs::path scratch = cache.make_scratch_dir();
    write_file_atomically(scratch / name, bytes);
    const fs::path entry = cache.store(name, scratch / name);
    if (entry.parent_path() != scratch) fs::remove_all(scratch);
    return entry;
  }
  std::string secret() const { return *read_file(root_ / "secret.key"); }
  static void write(const fs::path& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  }
  static void require_root() {
    if (geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  }

  fs::path root_, dir_;
};

TEST_F(TrustedDiskCache, FoldersSecretAndEntriesAreCreatedOwnerOnly) {
  const mode_t old_umask = ::umask(0);  // 0700 and 0600 whatever the umask
  const DiskCache cache(dir_);
  const fs::path entry = put(cache, "k.so", "object bytes");
  const fs::path scratch = cache.make_scratch_dir();
  ::umask(old_umask);
  EXPECT_EQ(entry, dir_ / "k.so");
  EXPECT_EQ(mode_of(root_), 0700u);
  EXPECT_EQ(mode_of(dir_), 0700u);
  EXPECT_EQ(mode_of(scratch), 0700u);
  EXPECT_EQ(mode_of(root_ / "secret.key"), 0600u);
  EXPECT_EQ(secret().size(), 32u);
  EXPECT_EQ(mode_of(entry), 0600u);
  EXPECT_EQ(mode_of(dir_ / "k.so.sum"), 0600u);
  EXPECT_EQ(cache.find("k.so"), entry);
}

// The checksum's format, which tests/python/test_cache_trust.py checks with Python's hmac
// against the same secret.key the trace cache uses.
TEST_F(TrustedDiskCache, TheChecksumIsAnHmacOfNameAndBytesUnderTheUsersSecret) {
  const DiskCache cache(dir_);
  put(cache, "k.so", "object bytes");
  EXPECT_EQ(*read_file(dir_ / "k.so.sum"),
            "k.so\nhmac-sha256 " +
                to_hex(hmac_sha256(secret(), std::string("k.so\0object bytes", 17))) + "\n");
}

TEST_F(TrustedDiskCache, AnEntryForgedWithARecomputedChecksumIsAMiss) {
  const DiskCache cache(dir_);
  const fs::path entry = put(cache, "k.so", "object bytes");
  CapturedWarnings warnings;
  // The old plain checksum: anyone can recompute it.
  write(entry, "forged code");
  write(dir_ / "k.so.sum", "k.so\n" + content_hash("forged code"));
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_FALSE(fs::exists(entry));  // removed: the next store rebuilds it

  // The right format under a key that is not the user's secret.
  put(cache, "k.so", "object bytes");
  write(entry, "forged code");
  write(dir_ / "k.so.sum",
        "k.so\nhmac-sha256 " +
            to_hex(hmac_sha256(std::string(32, 'x'), std::string("k.so\0forged code", 16))) + "\n");
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_THAT(warnings.lines(), IsEmpty());  // damage, not distrust: rebuilt quietly
}

TEST_F(TrustedDiskCache, AnEntryAnotherUserOwnsIsRefusedWithAWarningAndRemoved) {
  require_root();
  const DiskCache cache(dir_);
  const fs::path entry = put(cache, "k.so", "object bytes");
  ASSERT_EQ(::chown(entry.c_str(), kForeignUid, kForeignUid), 0);
  CapturedWarnings warnings;
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_THAT(warnings.lines(),
              ElementsAre(entry.string() + ": it is owned by uid 12345, not by this user (uid 0)"));
  EXPECT_THAT(warnings.all()[0].message,
              HasSubstr("metile: the compiled-object cache does not trust " + entry.string()));
  EXPECT_EQ(warnings.all()[0].category, "untrusted-cache");
  EXPECT_FALSE(fs::exists(entry));
  put(cache, "k.so", "object bytes");  // rebuilt, and trusted again
  EXPECT_EQ(cache.find("k.so"), entry);
}

TEST_F(TrustedDiskCache, AChecksumAnotherUserOwnsIsRefusedWithAWarning) {
  require_root();
  const DiskCache cache(dir_);
  put(cache, "k.so", "object bytes");
  ASSERT_EQ(::chown((dir_ / "k.so.sum").c_str(), kForeignUid, kForeignUid), 0);
  CapturedWarnings warnings;
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_THAT(warnings.lines(),
              ElementsAre((dir_ / "k.so.sum").string() +
                          ": it is owned by uid 12345, not by this user (uid 0)"));
}

TEST_F(TrustedDiskCache, AnEntryOthersMayWriteIsRefusedWithAWarning) {
  const DiskCache cache(dir_);
  const fs::path entry = put(cache, "k.so", "object bytes");
  fs::permissions(entry, fs::perms(0664));
  CapturedWarnings warnings;
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_THAT(warnings.lines(),
              ElementsAre(entry.string() + ": group or others may write to it (mode 664)"));
}

TEST_F(TrustedDiskCache, AnEntryThatIsASymbolicLinkIsRefusedWithAWarning) {
  const DiskCache cache(dir_);
  const fs::path entry = put(cache, "k.so", "object bytes");
  const fs::path elsewhere = root_ / "elsewhere.so";
  fs::rename(entry, elsewhere);
  fs::create_symlink(elsewhere, entry);
  CapturedWarnings warnings;
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_THAT(warnings.lines(), ElementsAre(entry.string() + ": it is a symbolic link"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(entry)));  // the link went,
  EXPECT_EQ(*read_file(elsewhere), "object bytes");     // not what it pointed to
}

// A folder others may write to: nothing there is read or written; the work happens in a
// private folder of the process. Made owner-only again, the old entry is still there.
TEST_F(TrustedDiskCache, AFolderOthersMayWriteToIsNotUsed) {
  for (const bool root_folder : {true, false}) {
    fs::remove_all(root_);
    const DiskCache cache(dir_);
    put(cache, "k.so", "object bytes");
    const fs::path folder = root_folder ? root_ : dir_;
    fs::permissions(folder, fs::perms(0775));
    CapturedWarnings warnings;
    EXPECT_FALSE(cache.trusted());
    EXPECT_EQ(cache.find("k.so"), std::nullopt);
    const std::string line = folder.string() +
                             ": group or others may write to it (mode 775); make it owner-only "
                             "(chmod 700 " +
                             folder.string() + ") to use the cache";
    EXPECT_THAT(warnings.lines(), ::testing::Contains(line));
    const fs::path work = cache.work_dir();
    EXPECT_NE(work, dir_);
    EXPECT_EQ(mode_of(work), 0700u);
    const fs::path stored = put(cache, "new.so", "new bytes");
    EXPECT_EQ(stored.parent_path().parent_path(), work);  // left in its private scratch
    EXPECT_FALSE(fs::exists(dir_ / "new.so"));
    EXPECT_TRUE(fs::exists(dir_ / "k.so"));  // not removed either
    fs::permissions(folder, fs::perms(0700));
    EXPECT_EQ(cache.find("k.so"), dir_ / "k.so");
  }
}

TEST_F(TrustedDiskCache, NothingIsMadeInsideARootOthersMayWriteTo) {
  fs::create_directories(root_);
  fs::permissions(root_, fs::perms(0777));
  CapturedWarnings warnings;
  const DiskCache cache(dir_);
  EXPECT_FALSE(cache.trusted());
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_FALSE(fs::exists(root_ / "secret.key"));
  EXPECT_EQ(warnings.all().size(), 1u);
}

TEST_F(TrustedDiskCache, AFolderAnotherUserOwnsIsNotUsed) {
  require_root();
  const DiskCache cache(dir_);
  put(cache, "k.so", "object bytes");
  ASSERT_EQ(::chown(dir_.c_str(), kForeignUid, kForeignUid), 0);
  CapturedWarnings warnings;
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_THAT(warnings.lines(),
              ElementsAre(dir_.string() + ": it is owned by uid 12345, not by this user (uid 0)"));
  EXPECT_NE(cache.make_scratch_dir().parent_path(), dir_);
}

TEST_F(TrustedDiskCache, ASecretOthersMayReadIsRefusedWithAWarning) {
  const DiskCache cache(dir_);
  put(cache, "k.so", "object bytes");
  fs::permissions(root_ / "secret.key", fs::perms(0644));
  CapturedWarnings warnings;
  EXPECT_EQ(cache.find("k.so"), std::nullopt);
  EXPECT_THAT(warnings.lines(), ElementsAre((root_ / "secret.key").string() +
                                            ": group or others may read or write it (mode 644)"));
}

TEST_F(TrustedDiskCache, ASecretThatIsNoKeyIsRefused) {
  fs::create_directories(root_);
  write(root_ / "secret.key", "short");
  fs::permissions(root_ / "secret.key", fs::perms(0600));
  CapturedWarnings warnings;
  EXPECT_FALSE(DiskCache(dir_).trusted());
  EXPECT_THAT(warnings.lines(), ElementsAre((root_ / "secret.key").string() +
                                            ": it is not a key of 32 bytes (remove it to make a "
                                            "new one)"));
}

// Processes that start together on an empty cache each make a secret; link() lets only the
// first into place, so every process signs with the one key on disk.
TEST_F(TrustedDiskCache, ProcessesRacingForTheSecretAgreeOnOne) {
  fs::create_directories(root_);
  fs::permissions(root_, fs::perms(0700));
  constexpr int kProcesses = 8;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t child = fork();
    if (child == 0) {
      std::string why;
      const auto key = cache_secret(root_, &why);
      if (!key) _exit(1);
      write(root_ / ("seen." + std::to_string(i)), *key);
      _exit(0);
    }
    ASSERT_GT(child, 0);
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  for (int i = 0; i < kProcesses; ++i)
    EXPECT_EQ(read_file(root_ / ("seen." + std::to_string(i))), secret()) << i;
  for (const auto& e : fs::directory_iterator(root_))
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".tmp")));
}

// Processes that need the same entry at once (the ranks of torchrun compiling one kernel)
// build it once: the others wait on the entry's lock and read what the first stored. Each
// builder appends its pid to built.log and takes its time, so the others do come asking
// while it builds; a damaged entry is rebuilt once, the same way.
TEST_F(TrustedDiskCache, ProcessesRacingForOneEntryBuildItOnceAndAllReadIt) {
  const std::string bytes = "the compiled kernel";
  for (const bool damaged : {false, true}) {
    if (damaged) write(dir_ / "k.so", "half a kern");  // fails its checksum
    fs::remove(root_ / "built.log");
    constexpr int kProcesses = 8;
    int start[2];
    ASSERT_EQ(::pipe(start), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < kProcesses; ++i) {
      const pid_t child = fork();
      if (child == 0) {
        ::close(start[1]);
        char go;
        if (::read(start[0], &go, 1) != 0) _exit(2);  // returns 0 once the parent closes it
        const DiskCache cache(dir_);
        std::string seen;
        const bool read = cache.read_or_build(
            "k.so",
            [&](const fs::path& scratch) {
              std::ofstream(root_ / "built.log", std::ios::app) << getpid() << "\n";
              ::usleep(200 * 1000);
              write_file_atomically(scratch / "k.so", bytes);
              return scratch / "k.so";
            },
            [&](const fs::path& entry) {
              seen = read_file(entry).value_or("");
              return true;
            });
        _exit(read && seen == bytes ? 0 : 1);
      }
      ASSERT_GT(child, 0);
      children.push_back(child);
    }
    ::close(start[0]);
    ::close(start[1]);  // every child starts now
    for (pid_t child : children) {
      int status = 0;
      waitpid(child, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "damaged " << damaged;
    }
    std::ifstream log(root_ / "built.log");
    int builds = 0;
    for (std::string line; std::getline(log, line);) ++builds;
    EXPECT_EQ(builds, 1) << "damaged " << damaged;
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    EXPECT_THAT(names, ElementsAre("k.so", "k.so.lock", "k.so.sum"));
    EXPECT_EQ(DiskCache(dir_).find("k.so"), dir_ / "k.so");
  }
}

}  // namespace
}  // namespace metile::runtime::testing
