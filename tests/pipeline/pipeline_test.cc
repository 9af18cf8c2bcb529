// The whole pipeline on the library kernels: emitted MSL kept as reviewed golden files,
// the ExecutionReport's contents, and METILE_DEBUG dumps that metile's own parser reads
// back unchanged.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "expected_pipeline.h"
#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/kernels/kernels.h"
#include "metile/pipeline.h"

namespace metile {
namespace {

using ir::DType;

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The goldens of one language: tests/pipeline/golden/msl or tests/pipeline/golden/cuda.
std::filesystem::path golden_dir(const std::string& language) {
  const char* root = std::getenv("METILE_SOURCE_DIR");
  return std::filesystem::path(root ? root : ".") / "tests/pipeline/golden" / language;
}

void expect_matches_golden(const std::string& source, const std::filesystem::path& path) {
  if (std::getenv("METILE_UPDATE_GOLDEN")) {
    std::ofstream(path) << source;
    GTEST_SKIP() << "rewrote " << path << "; review the diff";
  }
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing (METILE_UPDATE_GOLDEN=1)";
  EXPECT_EQ(source, read_file(path)) << "emitted source differs from " << path;
}

struct LibraryKernel {
  std::string name;
  ir::Kernel (*build)(DType, int64_t);
  DType dtype;
  int64_t block;
};

void PrintTo(const LibraryKernel& k, std::ostream* os) {
  *os << k.name;
}

const std::vector<LibraryKernel>& library() {
  static const std::vector<LibraryKernel> kernels = {
      {"vector_add_f32", kernels::vector_add, DType::f32, 1024},
      {"softmax_f32", kernels::softmax, DType::f32, 512},
      {"rms_norm_f16", kernels::rms_norm, DType::f16, 512},
      {"row_sum_bf16", kernels::row_sum, DType::bf16, 512},
  };
  return kernels;
}

class PipelineGolden : public testing::TestWithParam<LibraryKernel> {};

// A change here changes the code every user runs: regenerate with METILE_UPDATE_GOLDEN=1
// and review the diff like any other code change.
TEST_P(PipelineGolden, EmittedMslMatchesGolden) {
  const LibraryKernel& k = GetParam();
  PipelineOptions options;  // apple-m3: the host's MSL without its work-group function
  options.target = &target::target_by_name("apple-m3");
  const std::string source = compile_to_source(k.build(k.dtype, k.block), options).emitted.source;
  expect_matches_golden(source, golden_dir("msl") / (k.name + ".metal"));
}

// The same kernels through the whole pipeline for the H200 (sm90): the CUDA C++ NVRTC
// compiles (cuda_compile_test).
TEST_P(PipelineGolden, EmittedCudaMatchesGolden) {
  const LibraryKernel& k = GetParam();
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  const std::string source = compile_to_source(k.build(k.dtype, k.block), options).emitted.source;
  expect_matches_golden(source, golden_dir("cuda") / (k.name + ".cu"));
}

INSTANTIATE_TEST_SUITE_P(Library, PipelineGolden, testing::ValuesIn(library()),
                         [](const auto& info) { return info.param.name; });

// The tensor_ops backend's MSL for an M5: Metal 4 matmul2d over tensor_inline views, the f16
// output through its own cooperative destination.
TEST(PipelineGolden, TensorOpsGemmMatchesGolden) {
  PipelineOptions options;
  options.target = &target::target_by_name("apple-m5");
  Schedule tensor_ops;
  tensor_ops.backend = schedule::Backend::TensorOps;
  options.schedule = tensor_ops;
  const PipelineResult r =
      compile_to_source(kernels::gemm(DType::f16, DType::f16, 64, 32), options);
  expect_matches_golden(r.emitted.source, golden_dir("msl") / "gemm_tensor_ops_f16.metal");
  const nlohmann::json j = r.report.to_json();
  ASSERT_EQ(j["fused_epilogues"].size(), 1u);
  EXPECT_EQ(j["fused_epilogues"][0]["ops"], nlohmann::json::array({"cast"}));
  EXPECT_EQ(j["fused_epilogues"][0]["output_conversion"], "f32 -> f16");
  EXPECT_EQ(j["schedule_plan"]["backend"]["strategy"], "mpp_matmul2d");
}

TEST(ExecutionReport, SoftmaxRecordsGeometryAllocationsPassesAndLoops) {
  PipelineResult r = compile_to_source(kernels::softmax(DType::f32, 512));
  const nlohmann::json j = r.report.to_json();
  EXPECT_EQ(j["kernel"], "softmax_f32");
  EXPECT_EQ(j["target"], "host");
  const int threads = j["geometry"]["threads_per_threadgroup"][0];
  EXPECT_EQ(threads, r.emitted.abi.threads_per_threadgroup[0]);
  EXPECT_FALSE(j["geometry"]["reason"].get<std::string>().empty());
  EXPECT_EQ(j["geometry"]["ownership"].get<std::string>().rfind("contiguous: ", 0), 0u);
  // The sum of exponentials is a top-level FP32 sum: a register reduction.
  ASSERT_EQ(j["register_reductions"].size(), 1u);
  EXPECT_EQ(j["register_reductions"][0]["dtype"], "f32");
  EXPECT_EQ(j["register_reductions"][0]["threads"], threads);
  // Two reductions across more than one SIMD group need threadgroup scratch.
  ASSERT_FALSE(j["allocations"].empty());
  int64_t end = 0;
  for (const auto& a : j["allocations"]) {
    EXPECT_GT(a["bytes"].get<int64_t>(), 0);
    end = std::max(end, a["offset"].get<int64_t>() + a["bytes"].get<int64_t>());
  }
  EXPECT_LE(end, j["threadgroup_bytes"].get<int64_t>());
  EXPECT_EQ(j["threadgroup_bytes"], r.emitted.abi.threadgroup_bytes);
  // Two tile_range loops, each 512 elements wide: the maximum and sum-of-exp loops are one
  // online loop (merge_online_reductions), under the online softmax law's certificate.
  ASSERT_EQ(j["loops"].size(), 2u);
  ASSERT_EQ(j["discoveries"].size(), 1u);
  EXPECT_EQ(j["discoveries"][0]["applied"], true);
  EXPECT_EQ(j["discoveries"][0]["law"], "online_softmax");
  EXPECT_EQ(j["discoveries"][0]["certificate"]["obligations"].size(), 5u);
  for (const auto& l : j["loops"]) {
    EXPECT_EQ(l["tile_elements"], 512);
    EXPECT_EQ(l["elements_per_thread"], 512 / threads);
  }
  std::vector<std::string> passes;
  for (const auto& p : j["passes"]) passes.push_back(p["name"]);
  EXPECT_EQ(passes, kPipelineSteps);
  EXPECT_EQ(j["source_bytes"], static_cast<int64_t>(r.emitted.source.size()));
}

TEST(MathMode, StrictRemovesFastMathAndRelaxedAddsIt) {
  PipelineOptions strict, relaxed;
  strict.math = MathMode::Strict;
  relaxed.math = MathMode::Relaxed;
  const std::string s = compile_to_source(kernels::softmax(DType::f32, 512), strict).emitted.source;
  const std::string r =
      compile_to_source(kernels::softmax(DType::f32, 512), relaxed).emitted.source;
  EXPECT_EQ(s.find("fast::"), std::string::npos);
  EXPECT_NE(s.find("precise::exp"), std::string::npos);
  EXPECT_NE(r.find("fast::exp"), std::string::npos);
}

TEST(DebugDump, WritesEveryStepAndTheFilesReadBackUnchanged) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "metile_debug_test";
  std::filesystem::remove_all(dir);
  setenv("METILE_DEBUG", "all", 1);
  setenv("METILE_DEBUG_DIR", dir.c_str(), 1);
  compile_to_source(kernels::rms_norm(DType::f32, 256));
  unsetenv("METILE_DEBUG");
  unsetenv("METILE_DEBUG_DIR");
  std::map<std::string, int> by_extension;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "rms_norm_f32")) {
    const std::string ext = entry.path().extension();
    ++by_extension[ext];
    if (ext == ".tir" || ext == ".mir") {
      const std::string text = read_file(entry.path());
      EXPECT_EQ(ir::print(ir::parse(text, entry.path().string())), text) << entry.path();
    }
  }
  EXPECT_EQ(by_extension[".tir"], 13);  // input + twelve Tile IR passes
  // lowering, verify_scratch, verify_software_pipeline, verify_async_pipeline + five Metal IR
  // passes
  EXPECT_EQ(by_extension[".mir"], 9);
  EXPECT_EQ(by_extension[".metal"], 1);
  EXPECT_EQ(by_extension[".json"], 0);  // the schedule's JSON has a folder of its own
  int reports = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "schedule")) {
    EXPECT_EQ(entry.path().filename().string().rfind("rms_norm_f32-", 0), 0u) << entry.path();
    const nlohmann::json report = nlohmann::json::parse(read_file(entry.path()));
    EXPECT_EQ(report["schedule_plan"]["backend"]["value"], "elementwise");
    ++reports;
  }
  EXPECT_EQ(reports, 1);
  std::filesystem::remove_all(dir);
}

TEST(DebugDump, CudaWritesTheEmittedCuFile) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "metile_debug_cuda";
  std::filesystem::remove_all(dir);
  setenv("METILE_DEBUG", "cuda", 1);
  setenv("METILE_DEBUG_DIR", dir.c_str(), 1);
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  const PipelineResult r = compile_to_source(kernels::row_sum(DType::f32, 256), options);
  unsetenv("METILE_DEBUG");
  unsetenv("METILE_DEBUG_DIR");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir / "row_sum_f32"))
    files.push_back(entry.path());
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename(), "00_emit_cuda.cu");
  EXPECT_EQ(read_file(files[0]), r.emitted.source);
  EXPECT_EQ(r.report.passes.back().name, "emit_cuda");
  std::filesystem::remove_all(dir);
}

TEST(DebugDump, UnknownValueIsAnError) {
  setenv("METILE_DEBUG", "tile_ir,everything", 1);
  try {
    compile_to_source(kernels::row_sum(DType::f32, 256));
    ADD_FAILURE() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("METILE_DEBUG: unknown value 'everything'"),
              std::string::npos)
        << e.what();
  }
  unsetenv("METILE_DEBUG");
}

}  // namespace
}  // namespace metile
