// The replay diff: a compile with METILE_REPLAY_DIR set records what it compiled, and
// metile-replay reports every recorded kernel whose emitted source is no longer the same.
#include "metile/replay_log.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "metile/kernels/kernels.h"
#include "metile/support/errors.h"

namespace metile {
namespace {

namespace fs = std::filesystem;

struct ToolRun {
  int status;
  std::string output;
};

ToolRun run_replay(const fs::path& dir) {
  const std::string command = std::string(METILE_REPLAY_TOOL) + " " + dir.string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  std::string out;
  std::array<char, 512> chunk{};
  while (size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe)) out.append(chunk.data(), n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class Replay : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("metile_replay_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    ::setenv("METILE_REPLAY_DIR", dir_.c_str(), 1);
    PipelineOptions options;
    options.math = MathMode::Strict;
    source_ = compile_to_source(kernels::vector_add(ir::DType::f32), options).emitted.source;
    ::unsetenv("METILE_REPLAY_DIR");
    for (const auto& e : fs::directory_iterator(dir_)) files_.push_back(e.path());
  }
  void TearDown() override { fs::remove_all(dir_); }

  void rewrite_source(const std::string& source) {
    std::ifstream in(files_.at(0));
    nlohmann::json j = nlohmann::json::parse(in);
    j["source"] = source;
    std::ofstream(files_.at(0)) << j.dump();
  }

  fs::path dir_;
  std::string source_;
  std::vector<fs::path> files_;
};

TEST_F(Replay, ACompileRecordsItsInputOptionsAndSource) {
  ASSERT_EQ(files_.size(), 1u);
  const ReplayEntry entry = read_replay_entry(files_[0].string());
  EXPECT_EQ(entry.kernel, "vector_add_f32");
  EXPECT_EQ(entry.target, "host");
  EXPECT_EQ(entry.math, "strict");
  EXPECT_EQ(entry.source, source_);
  EXPECT_NE(entry.tile_ir.find("tile.kernel @vector_add_f32"), std::string::npos);
}

TEST_F(Replay, AnUnchangedCompilerReplaysIdentically) {
  const ToolRun run = run_replay(dir_);
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("1 kernels replayed, 0 differ, 0 failed"), std::string::npos)
      << run.output;
}

TEST_F(Replay, AVectorWidthOfOneIsRecordedAndReplayedWithIt) {
  // Grouping off changes the source of vector add; a replay without the option would differ.
  ::setenv("METILE_REPLAY_DIR", dir_.c_str(), 1);
  PipelineOptions options;
  options.math = MathMode::Strict;  // as SetUp's compile: only the vector width differs
  options.schedule.emplace().vector_width = 1;
  const std::string scalar =
      compile_to_source(kernels::vector_add(ir::DType::f32), options).emitted.source;
  ::unsetenv("METILE_REPLAY_DIR");
  ASSERT_NE(scalar, source_);
  int recorded = 0;
  for (const auto& e : fs::directory_iterator(dir_))
    recorded += read_replay_entry(e.path().string()).schedule == options.schedule;
  EXPECT_EQ(recorded, 1);
  const ToolRun run = run_replay(dir_);
  EXPECT_NE(run.output.find("2 kernels replayed, 0 differ, 0 failed"), std::string::npos)
      << run.output;
}

TEST_F(Replay, AChangedSourceIsReportedWithItsFirstDifferentLine) {
  rewrite_source(source_ + "// a line the compiler no longer writes\n");
  const ToolRun run = run_replay(dir_);
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("1 kernels replayed, 1 differ, 0 failed"), std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("-// a line the compiler no longer writes"), std::string::npos)
      << run.output;
}

TEST_F(Replay, AMalformedEntryFailsNamingTheFile) {
  std::ofstream(files_.at(0)) << "{\"kernel\": 1";
  const ToolRun run = run_replay(dir_);
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.output.find("is malformed"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("0 differ, 1 failed"), std::string::npos) << run.output;
}

TEST(ReplayLog, MathModeNamesRoundTripAndAnUnknownOneIsAUserError) {
  for (MathMode m : {MathMode::Default, MathMode::Strict, MathMode::Relaxed})
    EXPECT_EQ(math_mode_from_name(math_mode_name(m)), m);
  EXPECT_THROW(math_mode_from_name("fast"), UserError);
}

}  // namespace
}  // namespace metile
