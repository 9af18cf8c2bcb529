// Every CUDA source the tests know compiles to PTX with NVRTC for compute_90 (the H200's
// architecture), with no GPU: the CUDA goldens and the end-to-end suite's library kernels in
// every storage dtype and math mode. NVRTC is loaded with dlopen, as the cuda device loads it.
#include <dlfcn.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "golden_util.h"
#include "metile/codegen/cuda/cuda_dialect.h"
#include "metile/kernels/kernels.h"
#include "metile/pipeline.h"

namespace metile::codegen::testing {
namespace {

// The few NVRTC entry points the test calls, with their C signatures (nvrtc.h).
struct Nvrtc {
  using Program = struct _nvrtcProgram*;
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*);
  int (*compile)(Program, int, const char* const*);
  int (*log_size)(Program, size_t*);
  int (*log)(Program, char*);
  int (*ptx_size)(Program, size_t*);
  int (*ptx)(Program, char*);
  int (*destroy)(Program*);
  const char* (*error_string)(int);
  std::string load_error;

  Nvrtc() {
    void* lib = nullptr;
    for (const char* name : {"libnvrtc.so.13", "libnvrtc.so", METILE_NVRTC_LIBRARY})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      load_error = std::string("cannot load NVRTC (libnvrtc.so.13, libnvrtc.so, ") +
                   METILE_NVRTC_LIBRARY + "): " + dlerror();
      return;
    }
    bind(lib, create, "nvrtcCreateProgram");
    bind(lib, compile, "nvrtcCompileProgram");
    bind(lib, log_size, "nvrtcGetProgramLogSize");
    bind(lib, log, "nvrtcGetProgramLog");
    bind(lib, ptx_size, "nvrtcGetPTXSize");
    bind(lib, ptx, "nvrtcGetPTX");
    bind(lib, destroy, "nvrtcDestroyProgram");
    bind(lib, error_string, "nvrtcGetErrorString");
  }

  template <typename F>
  void bind(void* lib, F& f, const char* symbol) {
    f = reinterpret_cast<F>(dlsym(lib, symbol));
    if (!f) load_error += std::string(load_error.empty() ? "" : "; ") + "NVRTC lacks " + symbol;
  }
};

const Nvrtc& nvrtc() {
  static const Nvrtc n;
  return n;
}

// The PTX of `source`, or a test failure carrying NVRTC's log.
std::string compile_to_ptx(const std::string& source, const std::string& name) {
  const Nvrtc& n = nvrtc();
  if (!n.load_error.empty()) {
    ADD_FAILURE() << n.load_error;
    return "";
  }
  Nvrtc::Program program = nullptr;
  const std::string file = name + ".cu";
  int rc = n.create(&program, source.c_str(), file.c_str(), 0, nullptr, nullptr);
  if (rc != 0) {
    ADD_FAILURE() << "nvrtcCreateProgram(" << file << "): " << n.error_string(rc);
    return "";
  }
  const char* options[] = {"--gpu-architecture=compute_90"};
  rc = n.compile(program, 1, options);
  size_t size = 0;
  n.log_size(program, &size);
  std::string log(size, '\0');
  n.log(program, log.data());
  std::string ptx;
  if (rc != 0) {
    ADD_FAILURE() << "NVRTC cannot compile " << file << " (" << n.error_string(rc) << "):\n"
                  << log << "\nsource:\n"
                  << source;
  } else {
    n.ptx_size(program, &size);
    ptx.assign(size, '\0');
    n.ptx(program, ptx.data());
  }
  n.destroy(&program);
  return ptx;
}

// The entry keeps the kernel's own name (extern "C"), which the driver looks up.
void expect_entry(const std::string& ptx, const std::string& kernel) {
  EXPECT_NE(ptx.find(".entry " + kernel + "("), std::string::npos)
      << "the PTX has no entry named " << kernel;
}

std::vector<std::filesystem::path> cuda_goldens() {
  std::vector<std::filesystem::path> files;
  for (const char* dir : {"tests/codegen/golden/cuda", "tests/pipeline/golden/cuda"})
    for (const auto& entry : std::filesystem::directory_iterator(source_dir() + "/" + dir))
      if (entry.path().extension() == ".cu") files.push_back(entry.path());
  return files;
}

TEST(CudaCompile, EveryGoldenCompilesWithNvrtc) {
  const std::vector<std::filesystem::path> files = cuda_goldens();
  EXPECT_GE(files.size(), 9u) << "the CUDA goldens are missing";
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    EXPECT_FALSE(compile_to_ptx(read_file(file.string()), file.stem().string()).empty());
  }
}

// The library kernels as the end-to-end suite builds them (block 256) and at their default
// block, in every storage dtype and math mode: relaxed brings in the fast intrinsics.
TEST(CudaCompile, LibraryKernelsCompileInEveryDtypeAndMathMode) {
  using Build = ir::Kernel (*)(ir::DType, int64_t);
  const std::pair<const char*, Build> library[] = {{"vector_add", kernels::vector_add},
                                                   {"softmax", kernels::softmax},
                                                   {"rms_norm", kernels::rms_norm},
                                                   {"row_sum", kernels::row_sum}};
  for (const auto& [name, build] : library)
    for (ir::DType dtype : {ir::DType::f32, ir::DType::f16, ir::DType::bf16})
      for (int64_t block : {int64_t{256}, int64_t{1024}})
        for (MathMode math : {MathMode::Default, MathMode::Strict, MathMode::Relaxed}) {
          PipelineOptions options;
          options.target = &target::target_by_name("sm90");
          options.math = math;
          const PipelineResult r = compile_to_source(build(dtype, block), options);
          SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)) + " block " +
                       std::to_string(block) + " " + std::string(math_mode_name(math)));
          expect_entry(compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name),
                       r.emitted.abi.kernel_name);
        }
}

// A broken source fails with NVRTC's log, so the two tests above can fail.
TEST(CudaCompile, BrokenSourceReportsTheLog) {
  ::testing::TestPartResultArray failures;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    compile_to_ptx("extern \"C\" __global__ void broken() { undefined_name(); }", "broken");
  }
  ASSERT_EQ(failures.size(), 1);
  EXPECT_NE(std::string(failures.GetTestPartResult(0).message()).find("undefined_name"),
            std::string::npos)
      << failures.GetTestPartResult(0).message();
}

}  // namespace
}  // namespace metile::codegen::testing
