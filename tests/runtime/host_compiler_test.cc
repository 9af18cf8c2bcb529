// The host compiler's disk cache: hits skip the C++ compiler, damaged entries (and another
// entry's files under this name, a truncated standard-library header) are rebuilt, forged and
// untrusted ones too (another kernel's object with a recomputed checksum, an object or the
// headers another user owns, a symbolic link, a folder others may write to), leftovers
// of dead processes are removed, compile errors keep the source, and a compiler child dies
// with its parent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "captured_warnings.h"
#include "metile/runtime/host/host_compiler.h"
#include "metile/runtime/host/host_device.h"
#include "metile/runtime/host/subprocess.h"
#include "metile/support/errors.h"
#include "metile/support/hash.h"
#include "metile/support/sha256.h"
#include "test_kernels.h"

namespace metile::runtime::testing {
namespace {

namespace fs = std::filesystem;
using host::HostCompiler;
using host::HostCompilerOptions;
using ::testing::HasSubstr;

class HostCompilerCache : public ::testing::Test {
 protected:
  // A cache root of its own, the host objects in its folder "host" (as under cache_root()).
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("metile-cache-test-" + std::to_string(getpid()));
    dir_ = root_ / "host";
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  HostCompiler fresh_compiler() const {
    HostCompilerOptions o = HostCompilerOptions::from_environment();
    o.cache_dir = dir_;
    return HostCompiler(o);
  }
  fs::path only_object() const {
    std::vector<fs::path> objects;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().extension() == ".so") objects.push_back(e.path());
    EXPECT_EQ(objects.size(), 1u);
    return objects.empty() ? fs::path() : objects.front();
  }
  // The module works: it adds.
  static void expect_adds(const std::shared_ptr<const host::HostModule>& module) {
    const CompiledKernel k{vector_add_msl(),
                           std::make_shared<const host::HostKernelModule>(vector_add_abi(), module),
                           &get_device("host")};
    Buffer a = get_device("host").allocate(ir::DType::f32, {4});
    Buffer out = get_device("host").allocate(ir::DType::f32, {4});
    for (int i = 0; i < 4; ++i) a.data_as<float>()[i] = float(i);
    k.launch({1}, {a, a, out, 4});
    EXPECT_EQ(out.data_as<float>()[3], 6.0f);
  }

  fs::path root_, dir_;
};

TEST_F(HostCompilerCache, SecondCompileHitsMemoryThenDisk) {
  using Clock = std::chrono::steady_clock;
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  HostCompiler first = fresh_compiler();
  const auto cold = Clock::now();
  auto m1 = first.compile(vector_add_msl(), vector_add_abi());
  const double cold_ms = ms_since(cold);
  auto m2 = first.compile(vector_add_msl(), vector_add_abi());
  EXPECT_EQ(m1, m2);
  EXPECT_EQ(first.stats().compiler_runs, 1);
  EXPECT_EQ(first.stats().memory_hits, 1);

  HostCompiler second = fresh_compiler();  // a new process, in effect
  const auto warm = Clock::now();
  auto m3 = second.compile(vector_add_msl(), vector_add_abi());
  std::printf("vector_add host compile: cold %.0f ms, from the disk cache %.1f ms\n", cold_ms,
              ms_since(warm));
  EXPECT_EQ(second.stats().compiler_runs, 0);
  EXPECT_EQ(second.stats().disk_hits, 1);
  expect_adds(m3);
}

TEST_F(HostCompilerCache, DamagedEntryIsIgnoredAndRebuilt) {
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  const fs::path object = only_object();
  fs::resize_file(object, fs::file_size(object) / 2);  // a truncated file

  HostCompiler second = fresh_compiler();
  auto module = second.compile(vector_add_msl(), vector_add_abi());
  EXPECT_EQ(second.stats().compiler_runs, 1);
  EXPECT_EQ(second.stats().disk_hits, 0);
  expect_adds(module);

  fs::remove(object.string() + ".sum");  // an entry without its checksum
  HostCompiler third = fresh_compiler();
  third.compile(vector_add_msl(), vector_add_abi());
  EXPECT_EQ(third.stats().compiler_runs, 1);
}

TEST_F(HostCompilerCache, AnotherEntrysFilesUnderThisNameAreRebuilt) {
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  const fs::path object = only_object();
  const fs::path other_dir = root_ / "other";  // signed with the same secret
  {
    HostCompilerOptions o = HostCompilerOptions::from_environment();
    o.cache_dir = other_dir;
    HostCompiler(o).compile(vector_add_msl() + "\n// another kernel\n", vector_add_abi());
  }
  fs::path other;
  for (const auto& e : fs::directory_iterator(other_dir))
    if (e.path().extension() == ".so") other = e.path();
  ASSERT_FALSE(other.empty());
  fs::copy_file(other, object, fs::copy_options::overwrite_existing);
  fs::copy_file(other.string() + ".sum", object.string() + ".sum",
                fs::copy_options::overwrite_existing);
  fs::remove_all(other_dir);

  HostCompiler second = fresh_compiler();
  expect_adds(second.compile(vector_add_msl(), vector_add_abi()));
  EXPECT_EQ(second.stats().compiler_runs, 1);
  EXPECT_EQ(second.stats().disk_hits, 0);
}

TEST_F(HostCompilerCache, ATruncatedStandardLibraryHeaderIsRepaired) {
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  std::vector<fs::path> headers;
  for (const auto& e : fs::recursive_directory_iterator(dir_))
    if (e.is_regular_file() && e.path().string().find("/stdlib-") != std::string::npos)
      headers.push_back(e.path());
  ASSERT_FALSE(headers.empty());
  for (const fs::path& h : headers) fs::resize_file(h, fs::file_size(h) / 2);

  HostCompiler second = fresh_compiler();  // a new kernel needs the headers
  expect_adds(second.compile(vector_add_msl() + "\n// a new kernel\n", vector_add_abi()));
  EXPECT_EQ(second.stats().compiler_runs, 1);
}

// Processes that start together on an empty cache each find the headers missing; none may
// move aside the good copy another has just put in place (ctest -j16 on a fresh machine did).
TEST_F(HostCompilerCache, ProcessesStartingTogetherAllFindTheHeaders) {
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    const pid_t child = fork();
    if (child == 0) {
      try {
        fresh_compiler().compile(vector_add_msl(), vector_add_abi());
        _exit(0);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "process %d: %s\n", i, e.what());
        _exit(1);
      }
    }
    ASSERT_GT(child, 0);
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
}

TEST_F(HostCompilerCache, LeftoversOfDeadProcessesAreRemoved) {
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  const fs::path dead_scratch = dir_ / ("scratch." + std::to_string(dead) + ".0.tmp");
  const fs::path dead_file = dir_ / ("x.so." + std::to_string(dead) + ".3.tmp");
  const fs::path live_scratch = dir_ / ("scratch." + std::to_string(getppid()) + ".0.tmp");
  fs::create_directories(dead_scratch / "inside");
  fs::create_directories(live_scratch);
  std::ofstream(dead_file) << "half written";
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  EXPECT_FALSE(fs::exists(dead_scratch));
  EXPECT_FALSE(fs::exists(dead_file));
  EXPECT_TRUE(fs::exists(live_scratch));  // its writer may still be working
}

// -- trust: an object is code this process runs (issue 34) -------------------------------

// Another kernel's object (it subtracts) put in place of vector_add's, under `checksum`.
void forge(const fs::path& object, const fs::path& root,
           const std::function<std::string(const std::string&)>& checksum) {
  const fs::path other_dir = root / "forger";
  HostCompilerOptions o = HostCompilerOptions::from_environment();
  o.cache_dir = other_dir;
  std::string subtracts = vector_add_msl();
  subtracts.replace(subtracts.find("float s = x + y;"), 16, "float s = x - y;");
  HostCompiler(o).compile(subtracts, vector_add_abi());
  for (const auto& e : fs::directory_iterator(other_dir))
    if (e.path().extension() == ".so") {
      fs::remove(object);  // a new file: the old one may still be mapped
      fs::copy_file(e.path(), object);
      std::ofstream(object.string() + ".sum", std::ios::trunc) << checksum(*read_file(e.path()));
    }
  fs::remove_all(other_dir);
}

TEST_F(HostCompilerCache, AnObjectForgedWithARecomputedChecksumIsRebuilt) {
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  const fs::path object = only_object();
  const std::string name = object.filename().string();
  // The plain checksum of before (name and content hash): anyone could recompute it.
  forge(object, root_, [&](const std::string& bytes) { return name + "\n" + content_hash(bytes); });
  {
    HostCompiler second = fresh_compiler();
    expect_adds(second.compile(vector_add_msl(), vector_add_abi()));  // adds, does not subtract
    EXPECT_EQ(second.stats().compiler_runs, 1);
    EXPECT_EQ(second.stats().disk_hits, 0);
  }  // unloaded: the process loads the path afresh

  // The HMAC format under a key that is not this user's secret.
  forge(object, root_, [&](const std::string& bytes) {
    return name + "\nhmac-sha256 " +
           to_hex(hmac_sha256(std::string(32, 'k'), name + std::string(1, '\0') + bytes)) + "\n";
  });
  HostCompiler third = fresh_compiler();
  expect_adds(third.compile(vector_add_msl(), vector_add_abi()));
  EXPECT_EQ(third.stats().compiler_runs, 1);
}

TEST_F(HostCompilerCache, AnObjectAnotherUserOwnsIsRefusedWithAWarningAndRebuilt) {
  if (geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  const fs::path object = only_object();
  ASSERT_EQ(::chown(object.c_str(), 12345, 12345), 0);
  CapturedWarnings warnings;
  HostCompiler second = fresh_compiler();
  expect_adds(second.compile(vector_add_msl(), vector_add_abi()));
  EXPECT_EQ(second.stats().compiler_runs, 1);
  EXPECT_THAT(warnings.lines(),
              ::testing::ElementsAre(object.string() +
                                     ": it is owned by uid 12345, not by this user (uid 0)"));
  struct stat status;
  ASSERT_EQ(::stat(object.c_str(), &status), 0);
  EXPECT_EQ(status.st_uid, 0u);  // rebuilt in its place: the next process hits it
  HostCompiler third = fresh_compiler();
  third.compile(vector_add_msl(), vector_add_abi());
  EXPECT_EQ(third.stats().disk_hits, 1);
}

TEST_F(HostCompilerCache, AnObjectThatIsASymbolicLinkIsRefusedWithAWarning) {
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  const fs::path object = only_object();
  const fs::path elsewhere = root_ / "elsewhere.so";
  fs::rename(object, elsewhere);
  fs::create_symlink(elsewhere, object);
  CapturedWarnings warnings;
  HostCompiler second = fresh_compiler();
  expect_adds(second.compile(vector_add_msl(), vector_add_abi()));
  EXPECT_EQ(second.stats().compiler_runs, 1);
  EXPECT_THAT(warnings.lines(),
              ::testing::ElementsAre(object.string() + ": it is a symbolic link"));
  EXPECT_FALSE(fs::is_symlink(object));
}

// A cache folder others may write to: the kernel is compiled and runs, in a private
// folder of the process; nothing in the open folder is read, written or removed.
TEST_F(HostCompilerCache, ACacheFolderOthersMayWriteToIsNotUsed) {
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  fs::permissions(dir_, fs::perms(0777));
  std::vector<fs::path> before;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) before.push_back(e.path());
  CapturedWarnings warnings;
  HostCompiler second = fresh_compiler();
  expect_adds(second.compile(vector_add_msl(), vector_add_abi()));
  expect_adds(second.compile(vector_add_msl() + "\n// a new kernel\n", vector_add_abi()));
  EXPECT_EQ(second.stats().compiler_runs, 2);
  EXPECT_EQ(second.stats().disk_hits, 0);
  std::vector<fs::path> after;
  for (const auto& e : fs::recursive_directory_iterator(dir_)) after.push_back(e.path());
  EXPECT_EQ(after, before);
  ASSERT_FALSE(warnings.lines().empty());
  EXPECT_EQ(warnings.lines()[0], dir_.string() +
                                     ": group or others may write to it (mode 777); make it "
                                     "owner-only (chmod 700 " +
                                     dir_.string() + ") to use the cache");
  fs::permissions(dir_, fs::perms(0700));
  HostCompiler third = fresh_compiler();
  third.compile(vector_add_msl(), vector_add_abi());
  EXPECT_EQ(third.stats().disk_hits, 1);
}

TEST_F(HostCompilerCache, StandardLibraryHeadersAnotherUserOwnsAreReplaced) {
  if (geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  fs::path stdlib;
  for (const auto& e : fs::directory_iterator(dir_))
    if (e.path().filename().string().rfind("stdlib-", 0) == 0) stdlib = e.path();
  ASSERT_FALSE(stdlib.empty());
  std::vector<fs::path> headers;
  for (const auto& e : fs::recursive_directory_iterator(stdlib))
    if (e.is_regular_file()) headers.push_back(e.path());
  ASSERT_FALSE(headers.empty());
  const fs::path header = headers.back();
  ASSERT_EQ(::lchown(header.c_str(), 12345, 12345), 0);  // the same bytes, another owner
  CapturedWarnings warnings;
  HostCompiler second = fresh_compiler();
  expect_adds(second.compile(vector_add_msl() + "\n// a new kernel\n", vector_add_abi()));
  EXPECT_THAT(warnings.lines(),
              ::testing::ElementsAre(header.string() +
                                     ": it is owned by uid 12345, not by this user (uid 0)"));
  struct stat status;
  ASSERT_EQ(::lstat(header.c_str(), &status), 0);
  EXPECT_EQ(status.st_uid, 0u);
  EXPECT_EQ(status.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(stdlib.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0700u);
}

// A process killed while its compiler runs must not leave the compiler running: the child
// gets SIGKILL when its parent dies (PR_SET_PDEATHSIG). This test adopts the orphan
// (PR_SET_CHILD_SUBREAPER) to see how it ended.
TEST(Subprocess, TheChildDiesWithItsParent) {
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const fs::path pid_file =
      fs::temp_directory_path() / ("metile-child-pid-" + std::to_string(getpid()));
  fs::remove(pid_file);
  const pid_t parent = fork();
  if (parent == 0) {
    host::run_process({"sh", "-c",
                       "echo $$ > " + pid_file.string() + ".tmp && mv " + pid_file.string() +
                           ".tmp " + pid_file.string() + " && exec sleep 600"});
    _exit(0);
  }
  ASSERT_GT(parent, 0);
  while (!fs::exists(pid_file)) usleep(1000);
  pid_t child = 0;
  std::ifstream(pid_file) >> child;
  fs::remove(pid_file);
  ASSERT_GT(child, 0);
  kill(parent, SIGKILL);
  waitpid(parent, nullptr, 0);
  int status = 0;
  pid_t ended = 0;  // the death signal is immediate; 60 s is only a bound on a failure
  for (int i = 0; i < 6000 && ended == 0; ++i) {
    ended = waitpid(child, &status, WNOHANG);
    if (ended == 0) usleep(10000);
  }
  if (ended == 0) {
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    FAIL() << "the compiler child outlived its parent";
  }
  ASSERT_EQ(ended, child);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  prctl(PR_SET_CHILD_SUBREAPER, 0);
}

TEST_F(HostCompilerCache, DifferentFlagsAreDifferentEntries) {
  fresh_compiler().compile(vector_add_msl(), vector_add_abi());
  HostCompilerOptions o = HostCompilerOptions::from_environment();
  o.cache_dir = dir_;
  o.extra_flags = {"-DMETILE_TEST_FLAG=1"};
  HostCompiler flagged(o);
  flagged.compile(vector_add_msl(), vector_add_abi());
  EXPECT_EQ(flagged.stats().compiler_runs, 1);
}

TEST_F(HostCompilerCache, CompileErrorIsAnInternalErrorKeepingTheSource) {
  std::string broken = vector_add_msl();
  broken.replace(broken.find("float s = x + y;"), 16, "float s = x + undefined_name;");
  HostCompiler compiler = fresh_compiler();
  try {
    compiler.compile(broken, vector_add_abi());
    FAIL() << "expected a compile error";
  } catch (const InternalError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("the host C++ compiler rejected the MSL of kernel 'vector_add'"));
    EXPECT_THAT(msg, HasSubstr("undefined_name"));
    const auto at = msg.find("source kept at ") + 15;
    const fs::path kept = msg.substr(at, msg.find('\n', at) - at);
    EXPECT_TRUE(fs::exists(kept)) << kept;
  }
  EXPECT_THROW(compiler.compile(broken, vector_add_abi()), InternalError);  // not cached
}

TEST_F(HostCompilerCache, UnusableCacheDirectoryIsAUserError) {
  fs::create_directories(root_);
  std::ofstream(dir_.string()) << "a file where the cache directory should be";
  HostCompiler compiler = fresh_compiler();
  try {
    compiler.compile(vector_add_msl(), vector_add_abi());
    FAIL() << "expected an error";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is not usable (set METILE_CACHE_DIR)"));
  }
  fs::remove(dir_);
}

}  // namespace
}  // namespace metile::runtime::testing
