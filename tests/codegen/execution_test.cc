// Emitted MSL run on the CPU: kernels without barriers or SIMD collectives may run their
// threads one after another, so calling the body per thread in a plain C++ program (built
// against the host emulator's metal_stdlib) checks what the emitted code computes.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <vector>

#include "golden_util.h"
#include "metal_kernels.h"
#include "metile/codegen/emit.h"

namespace metile::codegen::testing {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

std::string stdlib_include() {
  return source_dir() + "/metile/runtime/host/include";
}

// Compiles source + main and returns what the program prints.
std::string run(const std::string& name, const std::string& source, const std::string& main) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("metile_codegen_exec_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string cc = (dir / (name + ".cc")).string(), exe = (dir / name).string();
  write_file(cc, source + "\n#include <cstdio>\n" + main);
  const std::string compile = "c++ -std=c++20 -O1 -Wno-attributes -I '" + stdlib_include() + "' '" +
                              cc + "' -o '" + exe + "' 2>&1";
  EXPECT_EQ(std::system(compile.c_str()), 0) << compile;
  std::string out;
  if (FILE* p = popen(exe.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << exe;
  }
  std::filesystem::remove_all(dir);
  return out;
}

std::vector<double> numbers(const std::string& text) {
  std::istringstream in(text);
  std::vector<double> v;
  for (double x; in >> x;) v.push_back(x);
  return v;
}

// The body's geometry arguments for thread t of threadgroup g (1-D).
constexpr const char* kCoords =
    "uint3(g, 0, 0), uint3(groups, 1, 1), uint3(t, 0, 0), uint3(threads, 1, 1), t % 32, t / 32";

class ExecutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(stdlib_include() + "/metal_stdlib"))
        << stdlib_include() << "/metal_stdlib is missing: the emitted MSL cannot be compiled";
  }
};

TEST_F(ExecutionTest, SwapLoopComputesFibonacci) {
  const std::string src = emit(fibonacci_kernel(), target::default_target()).source;
  const std::string out = run("fibonacci", src,
                              R"(
int main() {
  int out[3] = {-1, -1, -1};
  uchar tg[16];
  const unsigned g = 0, groups = 1, t = 0, threads = 32;
  fibonacci_body(out, 10, tg, )" + std::string(kCoords) +
                                  R"();
  std::printf("%d %d %d\n", out[0], out[1], out[2]);
})");
  EXPECT_EQ(numbers(out), (std::vector<double>{55, 89, 10}));
}

TEST_F(ExecutionTest, VectorAddMasksTheTail) {
  const std::string src = emit(vector_add_kernel(), target::default_target()).source;
  const std::string out = run("vector_add", src,
                              R"(
int main() {
  float x[512], y[512], out[512];
  for (int i = 0; i < 512; ++i) { x[i] = i; y[i] = 0.5f * i; out[i] = -7; }
  uchar tg[16];
  const unsigned groups = 2, threads = 256;
  for (unsigned g = 0; g < groups; ++g)
    for (unsigned t = 0; t < threads; ++t)
      vector_add_body(x, y, out, 300, tg, )" +
                                  std::string(kCoords) + R"();
  for (int i = 0; i < 512; ++i) std::printf("%g\n", out[i]);
})");
  const std::vector<double> got = numbers(out);
  ASSERT_EQ(got.size(), 512u);
  for (int i = 0; i < 512; ++i) EXPECT_EQ(got[i], i < 300 ? 1.5 * i : -7) << i;
}

TEST_F(ExecutionTest, IfResultsReachTheirUsers) {
  const std::string src = emit(if_results_kernel(), target::default_target()).source;
  const std::string out = run("if_results", src,
                              R"(
int main() {
  float x[128], out[128];
  for (int i = 0; i < 128; ++i) x[i] = 0.25f * i;
  uchar tg[16];
  const unsigned g = 0, groups = 1, threads = 128;
  for (unsigned t = 0; t < threads; ++t) if_results_body(x, out, 100, tg, )" +
                                  std::string(kCoords) + R"();
  for (int i = 0; i < 128; ++i) std::printf("%g\n", out[i]);
})");
  const std::vector<double> got = numbers(out);
  ASSERT_EQ(got.size(), 128u);
  for (int i = 0; i < 128; ++i) EXPECT_EQ(got[i], i < 100 ? 0.5 * i + i : -1.0) << i;
}

TEST_F(ExecutionTest, Vec4LoadSelectStore) {
  const std::string src = emit(vec4_kernel(), target::default_target()).source;
  const std::string out = run("vec4", src,
                              R"(
int main() {
  alignas(16) float x[256], out[256];
  for (int i = 0; i < 256; ++i) { x[i] = (i % 7) * 0.25f - 0.5f; out[i] = -7; }
  uchar tg[16];
  const unsigned g = 0, groups = 1, threads = 64;
  for (unsigned t = 0; t < threads; ++t) vec4_square_body(x, out, 200, tg, )" +
                                  std::string(kCoords) + R"();
  for (int i = 0; i < 256; ++i) std::printf("%.9g\n", out[i]);
})");
  const std::vector<double> got = numbers(out);
  ASSERT_EQ(got.size(), 256u);
  for (int i = 0; i < 256; ++i) {
    const float v = (i % 7) * 0.25f - 0.5f, sq = v * v;
    // Whole vectors are stored when their first element is below n = 200.
    const double want = (i / 4) * 4 < 200 ? std::exp(sq > v ? sq : v) : -7.0;
    EXPECT_NEAR(got[i], want, 1e-5 * std::fabs(want)) << i;
  }
}

TEST_F(ExecutionTest, FloorDivRoundsTowardNegativeInfinity) {
  ir::Kernel k = metal_kernel("floordiv", 32, 0);
  MetalBuilder b(k);
  auto a = b.add_param("a", Type::ptr(DType::i32), "read");
  auto d = b.add_param("d", Type::ptr(DType::i32), "read");
  auto out = b.add_param("out", Type::ptr(DType::i32), "write");
  auto tid = b.thread_index();
  auto av = b.load(b.ptr_add(a, tid));
  auto dv = b.load(b.ptr_add(d, tid));
  auto q = b.op(OpKind::FloorDiv, av, dv);
  b.store(b.ptr_add(out, tid), q);
  const std::vector<int> as = {7, -7, 7, -7, 6, -6, 0, -1, 2147483647, -2147483647 - 1, 5, -9};
  const std::vector<int> ds = {2, 2, -2, -2, 3, 3, 5, 4, 2, 3, 1, 3};
  std::string init;
  for (size_t i = 0; i < as.size(); ++i)
    init += "a[" + std::to_string(i) + "] = " + std::to_string(as[i]) + "; d[" + std::to_string(i) +
            "] = " + std::to_string(ds[i]) + ";\n";
  const std::string out_text = run("floordiv", emit(k, target::default_target()).source,
                                   R"(
int main() {
  int a[32], d[32], out[32];
)" + init + R"(
  uchar tg[16];
  const unsigned g = 0, groups = 1, threads = 32;
  for (unsigned t = 0; t < )" + std::to_string(as.size()) +
                                       R"(; ++t) floordiv_body(a, d, out, tg, )" +
                                       std::string(kCoords) + R"();
  for (int i = 0; i < )" + std::to_string(as.size()) +
                                       R"(; ++i) std::printf("%d\n", out[i]);
})");
  const std::vector<double> got = numbers(out_text);
  ASSERT_EQ(got.size(), as.size());
  for (size_t i = 0; i < as.size(); ++i) {
    const double want = std::floor(static_cast<double>(as[i]) / ds[i]);
    EXPECT_EQ(got[i], want) << as[i] << " // " << ds[i];
  }
}

}  // namespace
}  // namespace metile::codegen::testing
