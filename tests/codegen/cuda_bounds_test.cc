// METILE_DEBUG=bounds on CUDA without a GPU (docs/reliability.md, "Out-of-bounds accesses"):
// the emitted checks before every device access, their hidden parameters, NVRTC compiling the
// checked kernels to PTX and to an sm_90a cubin (through ptxas), the default emission left as
// it was, the targets that have no checks refused by name, and the runtime's half that needs
// no GPU: the extents it passes, the fault record's decoding and the tensor-map check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "metile/codegen/cuda/cuda_bounds.h"
#include "metile/codegen/emit.h"
#include "metile/ir/parser.h"
#include "metile/kernels/kernels.h"
#include "metile/pipeline.h"
#include "metile/runtime/cuda/bounds_launch.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/support/debug_dump.h"
#include "metile/support/errors.h"
#include "nvrtc_test_support.h"

namespace metile::codegen::testing {
namespace {

using runtime::cuda::NvrtcOutput;

PipelineResult compile_for_sm90(ir::Kernel kernel, bool bounds,
                                std::optional<schedule::Schedule> s = std::nullopt) {
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  options.bounds_checks = bounds;
  options.schedule = s;
  return compile_to_source(std::move(kernel), options);
}

size_t count(const std::string& text, const std::string& word) {
  size_t n = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// Compiles to PTX and to a cubin (ptxas): both must succeed.
void expect_compiles(const EmittedKernel& e) {
  const std::string& name = e.abi.kernel_name;
  const std::string ptx = nvrtc_compile(e.source, name, NvrtcOutput::Ptx);
  EXPECT_NE(ptx.find(".entry " + name + "("), std::string::npos) << e.source;
  EXPECT_FALSE(nvrtc_compile(e.source, name, NvrtcOutput::Cubin).empty());
}

// One check per load and store of the body, each followed by its redirected pointer.
void expect_checked(const EmittedKernel& e, size_t buffers) {
  const std::string& s = e.source;
  EXPECT_TRUE(e.abi.bounds_checks);
  EXPECT_NE(s.find("struct metile_fault_record"), std::string::npos) << s;
  for (size_t i = 0; i < e.abi.params.size(); ++i) {
    if (e.abi.params[i].kind != AbiParam::Kind::Buffer) continue;
    EXPECT_NE(s.find("unsigned long long metile_extent" + std::to_string(i)), std::string::npos)
        << s;
  }
  EXPECT_EQ(count(s, "metile_fault_record* metile_fault"), 2u) << "the entry's and the body's";
  EXPECT_GE(count(s, " = metile_in_bounds("), buffers) << s;
  EXPECT_EQ(count(s, " = metile_in_bounds("), count(s, "metile_out_of_bounds(metile_fault, ")) << s;
  EXPECT_EQ(count(s, "const bool metile_ok"), count(s, "metile_out_of_bounds(metile_fault, ")) << s;
  EXPECT_NE(s.find(" metile_checked0 = metile_ok0"), std::string::npos) << s;
}

TEST(CudaBounds, TheDefaultEmissionHasNoChecks) {
  const PipelineResult r = compile_for_sm90(kernels::vector_add(ir::DType::f32, 256), false);
  EXPECT_FALSE(r.emitted.abi.bounds_checks);
  for (const char* word : {"metile_fault", "metile_extent", "metile_in_bounds", "metile_checked"})
    EXPECT_EQ(r.emitted.source.find(word), std::string::npos) << word;
}

TEST(CudaBounds, LibraryKernelsAreCheckedAndCompile) {
  using Build = ir::Kernel (*)(ir::DType, int64_t);
  const std::pair<const char*, Build> library[] = {{"vector_add", kernels::vector_add},
                                                   {"softmax", kernels::softmax},
                                                   {"rms_norm", kernels::rms_norm}};
  for (const auto& [name, build] : library)
    for (ir::DType dtype : {ir::DType::f32, ir::DType::f16, ir::DType::bf16}) {
      SCOPED_TRACE(std::string(name) + " " + std::string(ir::dtype_name(dtype)));
      const PipelineResult r = compile_for_sm90(build(dtype, 256), true);
      expect_checked(r.emitted, 2);
      expect_compiles(r.emitted);
    }
}

// A checked access goes through its redirected pointer: the load reads metile_checked<n>, which
// is the record's scratch where the check failed; the masked store's fault is recorded only
// where its mask holds.
TEST(CudaBounds, AFailedCheckRecordsAndRedirectsTheAccess) {
  ir::Kernel kernel = ir::parse(
      R"(tile.kernel @masked_copy(%x: ptr<f32> {access = "read"}, %out: ptr<f32> {access = "write"}, %n: i32) {
  %offs = arange {end = 64, start = 0} : tile<64xi32>
  %ns = splat %n : tile<64xi32>
  %mask = cmp %offs, %ns {pred = "lt"} : tile<64xi1>
  %xs = splat %x : tile<64xptr<f32>>
  %px = ptr_add %xs, %offs : tile<64xptr<f32>>
  %zero = constant {value = 0.0} : f32
  %zeros = splat %zero : tile<64xf32>
  %v = load %px, %mask, %zeros : tile<64xf32>
  %os = splat %out : tile<64xptr<f32>>
  %po = ptr_add %os, %offs : tile<64xptr<f32>>
  store %po, %v, %mask
}
)",
      "masked_copy.tir");
  for (ir::Op& op : kernel.body.ops)
    if (op.kind == ir::OpKind::Load) op.loc = SourceLocation{"probe.py", 5};
  const PipelineResult r = compile_for_sm90(kernel, true);
  const std::string& s = r.emitted.source;
  expect_checked(r.emitted, 2);
  EXPECT_NE(s.find("metile_in_bounds("), std::string::npos);
  EXPECT_NE(s.find("(const float*)(metile_fault->scratch)"), std::string::npos) << s;
  EXPECT_NE(s.find("(float*)(metile_fault->scratch)"), std::string::npos) << s;
  EXPECT_NE(s.find(", 4u, 0u, __LINE__);"), std::string::npos) << "a 4-byte read\n" << s;
  EXPECT_NE(s.find(", 4u, 1u, __LINE__);"), std::string::npos) << "a 4-byte write\n" << s;
  // The read's check maps back to the load's line (the runtime names it in the fault).
  const size_t check = s.find("metile_out_of_bounds(metile_fault, 0u");
  ASSERT_NE(check, std::string::npos);
  const int line = static_cast<int>(std::count(s.begin(), s.begin() + check, '\n')) + 1;
  EXPECT_EQ(r.emitted.abi.source_of_line(line).line, 5);
  expect_compiles(r.emitted);
}

TEST(CudaBounds, AtomicsAreCheckedAsWrites) {
  const ir::Kernel kernel = ir::parse(
      R"(tile.kernel @histogram(%x: ptr<i32> {access = "read_write"}, %f: ptr<f32> {access = "read_write"}) {
  %offs = arange {end = 64, start = 0} : tile<64xi32>
  %xs = splat %x : tile<64xptr<i32>>
  %px = ptr_add %xs, %offs : tile<64xptr<i32>>
  %one = constant {value = 1} : i32
  %ones = splat %one : tile<64xi32>
  %a = atomic_rmw %px, %ones {kind = "add", scope = "gpu", sem = "acq_rel"} : tile<64xi32>
  %c = atomic_cas %px, %a, %ones {scope = "gpu", sem = "acquire"} : tile<64xi32>
  %fs = splat %f : tile<64xptr<f32>>
  %pf = ptr_add %fs, %offs : tile<64xptr<f32>>
  %h = constant {value = 0.5} : f32
  %hs = splat %h : tile<64xf32>
  %d = atomic_rmw %pf, %hs {kind = "max", scope = "cta", sem = "relaxed"} : tile<64xf32>
}
)",
      "histogram.tir");
  const PipelineResult r = compile_for_sm90(kernel, true);
  expect_checked(r.emitted, 2);
  EXPECT_GE(count(r.emitted.source, ", 4u, 1u, __LINE__);"), 3u) << r.emitted.source;
  expect_compiles(r.emitted);
}

// The GEMM's paths: mma.sync with cp.async staging (the copies' sources are checked), device
// staging (matrix windows read from global memory: four corners each), and wgmma with TMA
// (the tensor maps are checked by the runtime before the launch; the epilogue's stores here).
TEST(CudaBounds, EveryGemmPathIsCheckedAndCompiles) {
  schedule::Schedule device;
  device.backend = schedule::Backend::Simdgroup;
  device.staging = schedule::Staging::Device;
  schedule::Schedule tensor_ops;
  tensor_ops.backend = schedule::Backend::TensorOps;
  const std::pair<const char*, std::optional<schedule::Schedule>> paths[] = {
      {"cp.async staging", std::nullopt}, {"device staging", device}, {"wgmma", tensor_ops}};
  for (const auto& [path, s] : paths) {
    SCOPED_TRACE(path);
    const ir::Kernel gemm = std::string(path) == "wgmma"
                                ? kernels::gemm(ir::DType::bf16, ir::DType::bf16, 128, 128, 64)
                                : kernels::gemm(ir::DType::bf16, ir::DType::bf16);
    const PipelineResult r = compile_for_sm90(gemm, true, s);
    expect_checked(r.emitted, 1);
    if (std::string(path) == "device staging") {
      EXPECT_NE(r.emitted.source.find("_3 = metile_in_bounds("), std::string::npos)
          << "a matrix window's fourth corner\n"
          << r.emitted.source;
    }
    expect_compiles(r.emitted);
  }
}

TEST(CudaBounds, TargetsWithoutChecksAreRefusedByName) {
  const ir::Kernel kernel = kernels::vector_add(ir::DType::f32, 256);
  PipelineOptions apple;
  apple.target = &target::target_by_name("apple-m3");
  apple.bounds_checks = true;
  try {
    compile_to_source(kernel, apple);
    ADD_FAILURE() << "an Apple GPU target has no recorded checks";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("METILE_DEBUG=bounds: MSL for target apple-m3 has no "
                                         "bounds checks"),
              std::string::npos)
        << e.what();
  }
  schedule::Schedule ptx;
  ptx.route = schedule::Route::Ptx;
  try {
    compile_for_sm90(kernel, true, ptx);
    ADD_FAILURE() << "the PTX route has no checks";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("takes the PTX route"), std::string::npos) << e.what();
  }
  // The host emulator checks every access anyway: the option changes nothing there.
  PipelineOptions host;
  host.target = &target::target_by_name("host");
  const std::string plain = compile_to_source(kernel, host).emitted.source;
  host.bounds_checks = true;
  EXPECT_EQ(compile_to_source(kernel, host).emitted.source, plain);
}

TEST(CudaBounds, MetileDebugNamesBoundsAsACheckNotADump) {
  const char* saved = std::getenv("METILE_DEBUG");
  const std::string before = saved ? saved : "";
  setenv("METILE_DEBUG", "cuda,bounds", 1);
  EXPECT_TRUE(bounds_checks_requested());
  setenv("METILE_DEBUG", "all", 1);
  EXPECT_FALSE(bounds_checks_requested()) << "all names every dump, not the checks";
  setenv("METILE_DEBUG", "bound", 1);
  EXPECT_THROW(bounds_checks_requested(), UserError);
  if (saved)
    setenv("METILE_DEBUG", before.c_str(), 1);
  else
    unsetenv("METILE_DEBUG");
}

// ---- the runtime's half, without a GPU ------------------------------------------------------

KernelABI two_buffer_abi() {
  KernelABI abi;
  abi.kernel_name = "read_runtime";
  abi.params = {{"X", AbiParam::Kind::Buffer, ir::DType::f32, "read"},
                {"start", AbiParam::Kind::Scalar, ir::DType::i32, ""},
                {"out", AbiParam::Kind::Buffer, ir::DType::f32, "write"}};
  abi.source_lines = {{41, SourceLocation{"probe.py", 12}}};
  abi.bounds_checks = true;
  return abi;
}

TEST(CudaBoundsRuntime, AFaultRecordReadsAsTheHostEmulatorsReport) {
  const KernelABI abi = two_buffer_abi();
  cuda_bounds::FaultRecord record;
  record.state = cuda_bounds::kWritten;
  record.param = 2;
  record.byte_offset = 244;
  record.bytes = 4;
  record.is_write = 1;
  record.line = 41;
  record.thread = 5;
  record.block[0] = 3;
  const unsigned long long extents[] = {244, 244};
  const runtime::KernelFaultError e = runtime::cuda::bounds_fault(record, abi, extents);
  EXPECT_EQ(e.rule(),
            "out-of-bounds access in kernel 'read_runtime' (threadgroup (3,0,0), thread 5): the "
            "access at byte offset 244 is past the end of buffer 2 ('out', 244 bytes) (a 4-byte "
            "write)");
  EXPECT_EQ(e.where().line, 12);
  EXPECT_EQ(e.site().buffer, "out");
  EXPECT_EQ(e.site().byte_offset, 244);
  EXPECT_EQ(e.site().thread, 5u);
  EXPECT_EQ(e.site().threadgroup[0], 3u);
  record.param = 0;
  record.byte_offset = 232;
  record.bytes = 16;
  record.is_write = 0;
  EXPECT_NE(std::string(runtime::cuda::bounds_fault(record, abi, extents).what())
                .find("byte offset 232 runs past the end of buffer 0 ('X', 244 bytes) (a 16-byte "
                      "read)"),
            std::string::npos);
  record.byte_offset = -4;
  EXPECT_NE(std::string(runtime::cuda::bounds_fault(record, abi, extents).what())
                .find("byte offset -4 is before the start of buffer 0"),
            std::string::npos);
  record.param = 1;  // a scalar: the kernel cannot have recorded it
  EXPECT_THROW(runtime::cuda::bounds_fault(record, abi, extents), InternalError);
}

TEST(CudaBoundsRuntime, ExtentsAreTheBuffersSizesInParameterOrder) {
  const KernelABI abi = two_buffer_abi();
  std::vector<runtime::BoundArg> bound(3);
  EXPECT_EQ(runtime::cuda::buffer_extents(abi, bound), (std::vector<unsigned long long>{0, 0}))
      << "buffers without memory have no bytes";
}

TEST(CudaBoundsRuntime, ATensorMapPastItsBufferIsAFaultBeforeTheLaunch) {
  KernelABI abi;
  abi.kernel_name = "gemm";
  abi.params = {{"a", AbiParam::Kind::Buffer, ir::DType::bf16, "read"},
                {"rows", AbiParam::Kind::Scalar, ir::DType::i32, ""}};
  abi.tensor_maps = {{0, AbiExtent{1, 0}, AbiExtent{-1, 64}, 128, 64}};
  std::vector<runtime::BoundArg> bound(2);
  const int32_t rows = 100;
  std::memcpy(bound[1].scalar, &rows, sizeof rows);
  const unsigned long long fits[] = {100 * 64 * 2};
  EXPECT_NO_THROW(runtime::cuda::check_tensor_maps_fit(abi, bound, fits));
  const unsigned long long short_by_a_row[] = {99 * 64 * 2};
  try {
    runtime::cuda::check_tensor_maps_fit(abi, bound, short_by_a_row);
    ADD_FAILURE() << "the map's last row is past the buffer";
  } catch (const runtime::KernelFaultError& e) {
    EXPECT_NE(std::string(e.what()).find("the TMA tensor map of 'a' [100, 64] covers 12800 bytes"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.site().buffer, "a");
    EXPECT_EQ(e.site().byte_offset, 99 * 64 * 2);
  }
}

}  // namespace
}  // namespace metile::codegen::testing
