// Every CUDA source the tests know compiles to PTX with NVRTC for the H200's architecture,
// with no GPU: the CUDA goldens and the end-to-end suite's library kernels in every storage
// dtype and math mode, through the cuda device's own NVRTC loader and options.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "golden_util.h"
#include "metile/codegen/cuda/cuda_dialect.h"
#include "metile/codegen/emit.h"
#include "metile/dsl/dsl.h"
#include "metile/ir/parser.h"
#include "metile/kernels/kernels.h"
#include "metile/lower/verify_software_pipeline.h"
#include "metile/pass_registry.h"
#include "metile/pipeline.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/support/errors.h"
#include "nvrtc_test_support.h"

namespace metile::codegen::testing {
namespace {

// The PTX of `source`, or a test failure carrying NVRTC's log.
std::string compile_to_ptx(const std::string& source, const std::string& name) {
  return nvrtc_compile(source, name, runtime::cuda::NvrtcOutput::Ptx);
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

// The library GEMM on sm90: dot lowers to matrix fragments (mma.sync for f16/bf16, the exact
// path for f32, TF32 mma under relaxed math), and every variant compiles.
TEST(CudaCompile, GemmCompilesInEveryDtypeAndMathMode) {
  for (ir::DType dtype : {ir::DType::f32, ir::DType::f16, ir::DType::bf16})
    for (MathMode math : {MathMode::Default, MathMode::Relaxed}) {
      PipelineOptions options;
      options.target = &target::target_by_name("sm90");
      options.math = math;
      const PipelineResult r = compile_to_source(kernels::gemm(dtype, dtype), options);
      SCOPED_TRACE(std::string(ir::dtype_name(dtype)) + " " + std::string(math_mode_name(math)));
      const std::string ptx = compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name);
      expect_entry(ptx, r.emitted.abi.kernel_name);
      const bool mma = dtype != ir::DType::f32 || math == MathMode::Relaxed;
      EXPECT_EQ(ptx.find("mma.sync") != std::string::npos, mma);
    }
}

// The library's decode GEMV on sm90: each thread's run of a weight row is one 16-byte load in
// every dtype (docs/decode_gemm.md), and its split sum compiles too.
TEST(CudaCompile, TheDecodeGemvReadsWeightRunsAsSixteenByteLoads) {
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  for (ir::DType dtype : {ir::DType::f32, ir::DType::f16, ir::DType::bf16}) {
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    const PipelineResult r = compile_to_source(kernels::gemv(dtype, ir::DType::f32), options);
    const std::string ptx = compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name);
    expect_entry(ptx, r.emitted.abi.kernel_name);
    const std::string width = dtype == ir::DType::f32 ? ".v4.f32" : ".v4.u32";
    EXPECT_NE(ptx.find("ld.global" + width), std::string::npos) << ptx;
    const PipelineResult sum = compile_to_source(kernels::split_sum(dtype), options);
    expect_entry(compile_to_ptx(sum.emitted.source, sum.emitted.abi.kernel_name),
                 sum.emitted.abi.kernel_name);
  }
}

// The library GEMM on sm90 with 16-bit operands takes mma.sync's own m16n8k16: ldmatrix
// operand loads from padded threadgroup rows and one mma per 16 x 8 x 16 product, none of the
// 8x8 fragments' m16n8k8 (which wastes half of each instruction); f32 keeps the 8x8 path.
TEST(CudaCompile, SixteenBitGemmTakesMmaSyncNativeFragments) {
  for (ir::DType dtype : {ir::DType::f16, ir::DType::bf16, ir::DType::f32}) {
    PipelineOptions options;
    options.target = &target::target_by_name("sm90");
    const PipelineResult r = compile_to_source(kernels::gemm(dtype, dtype), options);
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    const std::string ptx = compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name);
    expect_entry(ptx, r.emitted.abi.kernel_name);
    const bool native = dtype != ir::DType::f32;
    EXPECT_EQ(ptx.find("mma.sync.aligned.m16n8k16") != std::string::npos, native);
    EXPECT_EQ(ptx.find("ldmatrix.sync.aligned.m8n8.x4") != std::string::npos, native);
    EXPECT_EQ(ptx.find("ldmatrix.sync.aligned.m8n8.x2.trans") != std::string::npos, native);
    if (native) {
      EXPECT_EQ(ptx.find("mma.sync.aligned.m16n8k8"), std::string::npos);
    }
    // The K loop is staged by asynchronous copies (lower_pipelined_loop.cc); 16-bit operands
    // copy in runs (dot_operand_vectors.h): the library's 64 x 16 a and 16 x 64 b tiles on 256
    // threads are one run of 4 per thread each, one 8-byte cp.async, in each of the three
    // copies of a three-stage pipeline (two in the prologue, one in the loop).
    EXPECT_EQ(r.report.grouped_copies, native ? 6 : 0);
    EXPECT_EQ(ptx.find("cp.async.ca.shared.global") != std::string::npos, true);
  }
}

// The library GEMM's K loop on sm90 is staged through shared-memory slots filled by cp.async,
// three by default and num_stages (the kernel attribute pipeline_stages) when the launch asks,
// unless it asks for one stage or the Schedule sets double_buffer=False; the plan and the
// report say which, and the PTX compiles either way.
TEST(CudaCompile, TheGemmsKLoopIsStagedByAsyncCopiesUnlessOneStageIsAsked) {
  struct Variant {
    std::optional<int64_t> stages;
    bool double_buffer_off;
    int staged;  // the pipeline's stages; 0: none
    std::string reason;
  };
  for (const Variant& v :
       {Variant{std::nullopt, false, 3, "Triton's default depth"},
        Variant{4, false, 4, "stages its operand tiles through 4 shared-memory slots"},
        Variant{1, false, 0, "num_stages=1"},
        Variant{std::nullopt, true, 0, "prohibited: a single operand buffer"}}) {
    ir::Kernel kernel = kernels::gemm(ir::DType::bf16, ir::DType::bf16);
    if (v.stages) kernel.attrs["pipeline_stages"] = *v.stages;
    PipelineOptions options;
    options.target = &target::target_by_name("sm90");
    if (v.double_buffer_off) {
      schedule::Schedule s;
      s.double_buffer = false;
      options.schedule = s;
    }
    const PipelineResult r = compile_to_source(kernel, options);
    SCOPED_TRACE(v.reason);
    EXPECT_TRUE(r.report.pipelining.prefetched_loops.empty());
    const std::string& why = r.report.schedule_plan.double_buffer_reason;
    EXPECT_NE(why.find(v.reason), std::string::npos) << why;
    EXPECT_EQ(r.report.pipelining.requested_stages, v.stages);
    ASSERT_EQ(r.report.pipelines.size(), v.staged ? 1u : 0u);
    const std::string ptx = compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name);
    expect_entry(ptx, r.emitted.abi.kernel_name);
    if (!v.staged) {
      EXPECT_EQ(ptx.find("cp.async"), std::string::npos);
      continue;
    }
    const schedule::SoftwarePipeline& p = r.report.pipelines[0];
    EXPECT_EQ(p.stages, v.staged);
    EXPECT_EQ(p.copy, schedule::PipelineCopy::Asynchronous);
    EXPECT_EQ(p.verified.size(), 7u);
    // The wait before each step's barrier leaves the later tiles' groups in flight.
    EXPECT_NE(ptx.find("cp.async.wait_group " + std::to_string(v.staged - 2)), std::string::npos);
  }
}

// A 16-bit GEMM whose K block is 64 runs its pipelined K loop on wgmma (strategy
// wgmma_pipelined): 16-byte cp.async copies into 128-byte-swizzled slots, the proxy fence
// before the publishing barrier, one wgmma per m64 block and K step of 16, the accumulator in
// wgmma's registers through the epilogue (no exchange through shared memory after the loop).
// Two warp groups of one m64 block each (128 x 256), and one of two (128 x 128). (The
// library's descriptor GEMM would take the tensor backend's wgmma_tma kernel at these blocks;
// the SIMD-group backend is asked for.)
TEST(CudaCompile, AGemmWithSixtyFourWideKBlocksRunsOnWgmma) {
  struct Variant {
    int64_t block_m, block_n, threads;
    std::string instruction;
  };
  for (const Variant& v : {Variant{128, 256, 256, "wgmma.mma_async.sync.aligned.m64n256k16"},
                           Variant{128, 128, 128, "wgmma.mma_async.sync.aligned.m64n128k16"}}) {
    ir::Kernel kernel = kernels::gemm(ir::DType::bf16, ir::DType::bf16, v.block_m, v.block_n, 64);
    kernel.attrs["num_threads"] = v.threads;
    PipelineOptions options;
    options.target = &target::target_by_name("sm90");
    schedule::Schedule simdgroup;
    simdgroup.backend = schedule::Backend::Simdgroup;
    options.schedule = simdgroup;
    const PipelineResult r = compile_to_source(kernel, options);
    SCOPED_TRACE(v.instruction);
    EXPECT_EQ(r.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaPipelined)
        << r.report.schedule_plan.double_buffer_reason;
    ASSERT_EQ(r.report.pipelines.size(), 1u);
    // Triton's default three stages, plus the slot that keeps Triton's prefetch distance when
    // the step consumes before it waits.
    EXPECT_EQ(r.report.pipelines[0].stages, 4);
    EXPECT_EQ(r.report.pipelines[0].copy, schedule::PipelineCopy::Asynchronous);
    for (const schedule::AllocationRecord& a : r.report.allocations)
      EXPECT_EQ(a.purpose.find("dot result"), std::string::npos) << a.purpose;
    const std::string ptx = compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name);
    expect_entry(ptx, r.emitted.abi.kernel_name);
    EXPECT_NE(ptx.find(v.instruction), std::string::npos);
    EXPECT_NE(ptx.find("cp.async.cg.shared.global"), std::string::npos);
    EXPECT_NE(ptx.find("fence.proxy.async.shared::cta"), std::string::npos);
    EXPECT_EQ(ptx.find("mma.sync"), std::string::npos);
  }
}

// FlashAttention's forward step (tests/lit/lower/Inputs/attention.tir: the corpus kernel at
// BLOCK_M = 128, BLOCK_N = 64, HEAD_DIM = 64 on 8 warps) takes wgmma_staged: both dots are
// wgmma with a from registers (q, and the softmax's probabilities), and ptxas (NVRTC's cubin
// for sm_90a) accepts the register operand form.
TEST(CudaCompile, AttentionsDotsRunOnWgmmaWithAFromRegisters) {
  const ir::Kernel kernel =
      ir::parse(read_file(source_dir() + "/tests/lit/lower/Inputs/attention.tir"));
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  const PipelineResult r = compile_to_source(kernel, options);
  EXPECT_EQ(r.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaStaged)
      << r.report.schedule_plan.double_buffer_reason;
  const std::string ptx = compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name);
  expect_entry(ptx, r.emitted.abi.kernel_name);
  // q @ k and p @ v: m64n64k16 with a as four 32-bit registers.
  EXPECT_NE(ptx.find("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16"), std::string::npos);
  EXPECT_NE(ptx.find("}, {%r"), std::string::npos) << "a is not in registers";
  EXPECT_EQ(ptx.find("mma.sync"), std::string::npos);
  EXPECT_FALSE(
      nvrtc_compile(r.emitted.source, r.emitted.abi.kernel_name, runtime::cuda::NvrtcOutput::Cubin)
          .empty());
}

// Triton's atomics become PTX atom with their sem and scope: add, max and min on i32/u32,
// add and exchange on f32, compare-and-swap; f32 max goes through s32 max (sign bit clear) or
// u32 min (set).
TEST(CudaCompile, AtomicsBecomePtxAtomWithTheirOrderAndScope) {
  const ir::Kernel kernel = ir::parse(
      R"(tile.kernel @atomics(%x: ptr<i32> {access = "read_write"}, %f: ptr<f32> {access = "read_write"}, %u: ptr<u32> {access = "read_write"}, %out: ptr<i32> {access = "write"}) {
  %offs = arange {end = 64, start = 0} : tile<64xi32>
  %xs = splat %x : tile<64xptr<i32>>
  %px = ptr_add %xs, %offs : tile<64xptr<i32>>
  %one = constant {value = 1} : i32
  %ones = splat %one : tile<64xi32>
  %t = constant {value = 1} : i1
  %mask = splat %t : tile<64xi1>
  %a = atomic_rmw %px, %ones, %mask {kind = "add", scope = "gpu", sem = "acq_rel"} : tile<64xi32>
  %b = atomic_rmw %px, %a {kind = "max", scope = "cta", sem = "relaxed"} : tile<64xi32>
  %c = atomic_cas %px, %a, %b {scope = "gpu", sem = "acquire"} : tile<64xi32>
  %fs = splat %f : tile<64xptr<f32>>
  %pf = ptr_add %fs, %offs : tile<64xptr<f32>>
  %h = constant {value = 0.5} : f32
  %hs = splat %h : tile<64xf32>
  %d = atomic_rmw %pf, %hs {kind = "add", scope = "sys", sem = "release"} : tile<64xf32>
  %e = atomic_rmw %pf, %d {kind = "xchg", scope = "gpu", sem = "acq_rel"} : tile<64xf32>
  %fm = atomic_rmw %pf, %e {kind = "max", scope = "cta", sem = "acquire"} : tile<64xf32>
  %us = splat %u : tile<64xptr<u32>>
  %pu = ptr_add %us, %offs : tile<64xptr<u32>>
  %k = cast %c : tile<64xu32>
  %g = atomic_rmw %pu, %k {kind = "min", scope = "gpu", sem = "acq_rel"} : tile<64xu32>
  %os = splat %out : tile<64xptr<i32>>
  %po = ptr_add %os, %offs : tile<64xptr<i32>>
  %ei = cast %fm : tile<64xi32>
  %gi = cast %g : tile<64xi32>
  %s = add %ei, %gi : tile<64xi32>
  store %po, %s
}
)",
      "atomics.tir");
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  const PipelineResult r = compile_to_source(kernel, options);
  const std::string ptx = compile_to_ptx(r.emitted.source, r.emitted.abi.kernel_name);
  expect_entry(ptx, r.emitted.abi.kernel_name);
  for (const char* instruction :
       {"atom.acq_rel.gpu.global.add.s32", "atom.relaxed.cta.global.max.s32",
        "atom.acquire.gpu.global.cas.b32", "atom.release.sys.global.add.f32",
        "atom.acq_rel.gpu.global.exch.b32", "atom.acq_rel.gpu.global.min.u32",
        "atom.acquire.cta.global.max.s32", "atom.acquire.cta.global.min.u32"})
    EXPECT_NE(ptx.find(instruction), std::string::npos) << instruction;
}

// The wgmma pipeline's Metal IR, straight from lowering, passes verify_software_pipeline (the
// wgmma reads cover whole swizzled rows, every one copied once); without the proxy fence
// before the publishing barrier it is rejected.
TEST(CudaCompile, TheWgmmaPipelineIsVerifiedAndNeedsItsProxyFence) {
  ir::Kernel kernel = kernels::gemm(ir::DType::bf16, ir::DType::bf16, 128, 128, 64);
  kernel.attrs["num_threads"] = int64_t{128};
  const target::Target& sm90 = target::target_by_name("sm90");
  PassContext context(sm90);
  schedule::Schedule simdgroup;
  simdgroup.backend = schedule::Backend::Simdgroup;
  context.schedule = simdgroup;
  for (const std::string& name : pass_names()) {
    if (name == "verify_scratch") break;  // right after lower_to_metal
    kernel = find_pass(name).run(std::move(kernel), context).kernel;
  }
  ASSERT_EQ(kernel.dialect, ir::Dialect::Metal);
  EXPECT_EQ(lower::verify_software_pipeline(kernel, sm90).size(), 1u);
  bool removed = false;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::For) return;
    auto& ops = const_cast<ir::Op&>(op).regions[0].ops;
    removed |= std::erase_if(
                   ops, [](const ir::Op& o) { return o.kind == ir::OpKind::AsyncProxyFence; }) > 0;
  });
  ASSERT_TRUE(removed);
  try {
    lower::verify_software_pipeline(kernel, sm90);
    ADD_FAILURE() << "no error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("publication: no async_proxy_fence before the barrier "
                                         "makes the copies visible to wgmma's asynchronous reads"),
              std::string::npos)
        << e.what();
  }
}

// The library GEMM under Schedule(backend="simdgroup", staging="device") on sm90: the operand
// fragments are per-lane global loads (complete blocks) or masked copies through the warp's
// tail scratch between warp barriers (ragged ones), with no shared-memory operand tiles.
TEST(CudaCompile, DeviceStagedGemmReadsFragmentsFromGlobalMemory) {
  for (ir::DType dtype : {ir::DType::f32, ir::DType::f16, ir::DType::bf16}) {
    PipelineOptions options;
    options.target = &target::target_by_name("sm90");
    schedule::Schedule device;
    device.backend = schedule::Backend::Simdgroup;
    device.staging = schedule::Staging::Device;
    options.schedule = device;
    const PipelineResult r = compile_to_source(kernels::gemm(dtype, dtype), options);
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    EXPECT_EQ(r.report.schedule_plan.staging, schedule::Staging::Device);
    bool tails = false;
    for (const schedule::AllocationRecord& a : r.report.allocations) {
      EXPECT_NE(a.purpose.rfind("dot operands", 0), 0u) << a.purpose;
      tails = tails || a.purpose.rfind("dot operand tails", 0) == 0;
    }
    EXPECT_TRUE(tails);
    const std::string& source = r.emitted.source;
    EXPECT_NE(source.find("metile_matrix_load("), std::string::npos) << source;
    EXPECT_NE(source.find("__syncwarp()"), std::string::npos) << source;
    const std::string ptx = compile_to_ptx(source, r.emitted.abi.kernel_name);
    expect_entry(ptx, r.emitted.abi.kernel_name);
    EXPECT_NE(ptx.find("ld.global"), std::string::npos);
    EXPECT_EQ(ptx.find("mma.sync") != std::string::npos, dtype != ir::DType::f32);
  }
}

// Kernel `name` for sm90: each of 64 threads loads `width` adjacent elements of x (masked by
// the scalar n when `masked`) and stores them doubled at the same place of out.
PipelineResult adjacent_accesses(const std::string& name, ir::DType dtype, int width, bool masked) {
  auto kernel = [=](dsl::KernelContext& k) {
    k.set_num_threads(64);
    auto x = k.buffer("x", dtype, "read");
    auto out = k.buffer("out", dtype, "write");
    std::optional<dsl::Value> n;
    if (masked) n = k.scalar("n", ir::DType::i32);
    auto first = dsl::program_id(0) * (64 * width) + dsl::thread_id() * width;
    std::vector<dsl::Value> v;
    for (int r = 0; r < width; ++r)
      v.push_back(masked ? dsl::load(x + (first + r), first + r < *n, 0)
                         : dsl::load(x + (first + r)));
    for (int r = 0; r < width; ++r)
      if (masked)
        dsl::store(out + (first + r), v[r] * 2, first + r < *n);
      else
        dsl::store(out + (first + r), v[r] * 2);
  };
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  return compile_to_source(dsl::trace(name, kernel), options);
}

// Four adjacent accesses per thread, as group_vector_accesses groups them: NVCC must see
// one vector access, 16 bytes of f32 or 8 bytes of f16 (two 32-bit words), behind the
// alignment guard.
TEST(CudaCompile, GroupedAccessesBecomeVectorInstructions) {
  for (ir::DType dtype : {ir::DType::f32, ir::DType::f16}) {
    const PipelineResult r = adjacent_accesses("grouped", dtype, 4, true);
    EXPECT_EQ(r.report.grouped_loads, 1);
    EXPECT_EQ(r.report.grouped_stores, 1);
    const std::string ptx = compile_to_ptx(r.emitted.source, "grouped");
    const std::string width = dtype == ir::DType::f32 ? ".v4.f32" : ".v2.u32";
    EXPECT_NE(ptx.find("ld.global" + width), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("st.global" + width), std::string::npos) << ptx;
  }
}

// Without masks (a shape compiled in) the grouped store's fallback stores the same elements as
// its vector: NVVM used to merge the two branches into the four scalar stores, and a
// specialised f32 RMSNorm ran 9% slower than the dynamic one on the H200.
TEST(CudaCompile, AnUnmaskedGroupedStoreStaysOneVectorInstruction) {
  for (ir::DType dtype : {ir::DType::f32, ir::DType::bf16}) {
    const PipelineResult r = adjacent_accesses("unmasked", dtype, 4, false);
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    EXPECT_EQ(r.report.grouped_stores, 1);
    const std::string ptx = compile_to_ptx(r.emitted.source, "unmasked");
    const std::string width = dtype == ir::DType::f32 ? ".v4.f32" : ".v2.u32";
    EXPECT_NE(ptx.find("st.global" + width), std::string::npos) << ptx;
  }
}

// Eight adjacent 2-byte accesses per thread group into one 16-byte access on sm90: NVCC must
// see one 16-byte load and store (four 32-bit lanes) of f16 and of bf16.
TEST(CudaCompile, EightTwoByteAccessesBecomeOneSixteenByteInstruction) {
  for (ir::DType dtype : {ir::DType::f16, ir::DType::bf16}) {
    const PipelineResult r = adjacent_accesses("grouped8", dtype, 8, true);
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    EXPECT_EQ(r.report.grouped_loads, 1);
    EXPECT_EQ(r.report.grouped_stores, 1);
    EXPECT_NE(r.emitted.source.find("struct __align__(16)"), std::string::npos);
    const std::string ptx = compile_to_ptx(r.emitted.source, "grouped8");
    EXPECT_NE(ptx.find("ld.global.v4.u32"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("st.global.v4.u32"), std::string::npos) << ptx;
  }
}

// Triton's eviction policies on CUDA: each hinted access, scalar or grouped, of every dtype
// is one ld/st with the L1 priority and an L2 cache policy (createpolicy), through the
// prelude's templates; the grouped ones stay single 16-byte (f32) or 8-byte (f16) accesses.
TEST(CudaCompile, EvictionPoliciesBecomeCacheHintedAccesses) {
  for (ir::DType dtype :
       {ir::DType::f32, ir::DType::f16, ir::DType::bf16, ir::DType::i32, ir::DType::i64}) {
    SCOPED_TRACE(std::string(ir::dtype_name(dtype)));
    auto kernel = [=](dsl::KernelContext& k) {
      k.set_num_threads(64);
      auto x = k.buffer("x", dtype, "read");
      auto out = k.buffer("out", dtype, "write");
      auto n = k.scalar("n", ir::DType::i32);
      auto first = dsl::program_id(0) * 256 + dsl::thread_id() * 4;
      std::vector<dsl::Value> v;
      for (int r = 0; r < 4; ++r)
        v.push_back(dsl::load(x + (first + r), first + r < n, 0, "evict_last"));
      for (int r = 0; r < 4; ++r) dsl::store(out + (first + r), v[r], first + r < n, "evict_first");
      dsl::store(out + n, dsl::load(x + n, {}, {}, "evict_first"), {}, "evict_last");
    };
    PipelineOptions options;
    options.target = &target::target_by_name("sm90");
    const PipelineResult r = compile_to_source(dsl::trace("hinted", kernel), options);
    const bool grouped =
        dtype == ir::DType::f32 || dtype == ir::DType::f16 || dtype == ir::DType::bf16;
    EXPECT_EQ(r.report.grouped_loads, grouped ? 1 : 0);
    const std::string ptx = compile_to_ptx(r.emitted.source, "hinted");
    for (const std::string eviction : {"evict_first", "evict_last"}) {
      EXPECT_NE(ptx.find("createpolicy.fractional.L2::" + eviction + ".b64"), std::string::npos);
      EXPECT_NE(ptx.find("ld.global.L1::" + eviction + ".L2::cache_hint"), std::string::npos);
      EXPECT_NE(ptx.find("st.global.L1::" + eviction + ".L2::cache_hint"), std::string::npos);
    }
    if (dtype == ir::DType::f32) {
      EXPECT_NE(ptx.find("ld.global.L1::evict_last.L2::cache_hint.v4.b32"), std::string::npos);
      EXPECT_NE(ptx.find("st.global.L1::evict_first.L2::cache_hint.v4.b32"), std::string::npos);
    }
    if (dtype == ir::DType::f16) {
      EXPECT_NE(ptx.find("ld.global.L1::evict_last.L2::cache_hint.v2.b32"), std::string::npos);
    }
    // No plain access is left: every load and store of the kernel carries its hint.
    EXPECT_EQ(ptx.find("ld.global.v"), std::string::npos) << ptx;
    EXPECT_EQ(ptx.find("st.global.v"), std::string::npos) << ptx;
  }
}

// Matrix fragments in every operand dtype: mma.sync for f16 and bf16, the exact shuffle path
// for f32, and mma.sync on TF32 for f32 with tf32 precision.
TEST(CudaCompile, MatrixFragmentsUseMmaSyncOrTheExactPath) {
  for (const char* dtype : {"f16", "bf16", "f32"})
    for (bool tf32 : {false, true}) {
      if (tf32 && std::string(dtype) != "f32") continue;
      const std::string m = std::string("matrix<8x8x") + dtype + ">";
      ir::Kernel kernel =
          ir::parse(std::string("metal.kernel @fragments(%a: ptr<") + dtype +
                    "> {access = \"read\"}, %out: ptr<f32> {access = \"write\"}, %n: i32)\n"
                    "    attributes {threadgroup_bytes = 256, threads_per_threadgroup = 32} {\n"
                    "  %zero = constant {value = 0} : i32\n"
                    "  %f_zero = constant {value = 0.0} : f32\n"
                    "  %tile = threadgroup_buffer {offset = 0, size = 64} : ptr<f32, threadgroup>\n"
                    "  %x = matrix_load %a, %zero, %n : " +
                    m +
                    "\n"
                    "  %y = matrix_load %a, %n, %n {transpose = 1} : " +
                    m +
                    "\n"
                    "  %acc = matrix_fill %f_zero : matrix<8x8xf32>\n"
                    "  %d = matrix_mma %x, %y, %acc : matrix<8x8xf32>\n"
                    "  %relu = max %d, %acc : matrix<8x8xf32>\n"
                    "  %narrow = cast %relu : " +
                    m +
                    "\n"
                    "  %e = matrix_mma %narrow, %y, %d" +
                    std::string(tf32 ? " {precision = \"tf32\"}" : "") +
                    " : matrix<8x8xf32>\n"
                    "  matrix_store %e, %tile, %zero, %n {transpose = 1}\n"
                    "  barrier {mem = \"threadgroup\", scope = \"simdgroup\"}\n"
                    "  matrix_store %e, %out, %zero, %n\n"
                    "}\n");
      SCOPED_TRACE(std::string(dtype) + (tf32 ? " tf32" : ""));
      const EmittedKernel e = emit(kernel, target::target_by_name("sm90"));
      const std::string ptx = compile_to_ptx(e.source, "fragments");
      expect_entry(ptx, "fragments");
      const std::string mma = std::string(dtype) == "f32" ? (tf32 ? "tf32" : "") : dtype;
      if (mma.empty()) {
        EXPECT_EQ(ptx.find("mma.sync"), std::string::npos) << "strict f32 must not round";
        EXPECT_NE(ptx.find("fma.rn.f32"), std::string::npos);
      } else {
        EXPECT_NE(ptx.find("mma.sync.aligned.m16n8k8.row.col.f32." + mma), std::string::npos);
      }
    }
}

// device_assert and device_print: printf to the device's stdout (vprintf in PTX), then a trap
// for a failed assertion; every printed dtype converts to what its format names.
TEST(CudaCompile, DeviceAssertAndPrintUsePrintfAndTrap) {
  ir::Kernel kernel = ir::parse(
      "metal.kernel @debugging(%a: ptr<f16> {access = \"read\"}, %n: i32, %big: i64)\n"
      "    attributes {threadgroup_bytes = 0, threads_per_threadgroup = 32} {\n"
      "  %t = thread_index {axis = 0} : i32\n"
      "  %x = load %a : f16\n"
      "  %inside = cmp %t, %n {pred = \"lt\"} : i1\n"
      "  %yes = constant {value = 1} : i1\n"
      "  assert %yes, %inside, %t {message = \"t < n (100%)\"}\n"
      "  print %inside, %t, %x, %big, %inside {format = \"t %i x %f big %lli %i\\n\"}\n"
      "}\n");
  const EmittedKernel e = emit(kernel, target::target_by_name("sm90"));
  EXPECT_NE(e.source.find("__trap();"), std::string::npos) << e.source;
  const std::string ptx = compile_to_ptx(e.source, "debugging");
  expect_entry(ptx, "debugging");
  EXPECT_NE(ptx.find("vprintf"), std::string::npos);
  EXPECT_NE(ptx.find("trap;"), std::string::npos);
}

// Device tiles (seed 002's masked_tiles loop, in f16 and f32): the peeled loop's complete
// tiles are matrix loads and stores of global memory, the remainder's tails bounded scalar
// copies through shared scratch between warp barriers.
TEST(CudaCompile, DeviceTilesLoadAndStoreGlobalMemory) {
  for (const char* dtype : {"f16", "f32"}) {
    const std::string t = dtype, m = "matrix<8x8x" + t + ">";
    const std::string tile =
        ", %rows, %eight, %scratch {column_stride = 1, row_stride = 8, "
        "scratch_rows = 8}";
    ir::Kernel kernel = ir::parse("tile.kernel @device_tiles(%src: ptr<" + t +
                                  "> {access = \"read\"}, %out: ptr<" + t +
                                  "> {access = \"write\"}, %rows: i32) {\n"
                                  "  %scratch = shared_alloc {size = 64} : ptr<" +
                                  t +
                                  ", threadgroup>\n"
                                  "  %zero = constant {value = 0} : i32\n"
                                  "  %eight = constant {value = 8} : i32\n"
                                  "  %one = constant {value = 1.0} : " +
                                  t +
                                  "\n"
                                  "  %ones = matrix_fill %one : " +
                                  m +
                                  "\n"
                                  "  for %zero, %rows, %eight {\n"
                                  "  ^(%row: i32):\n"
                                  "    %x = device_tile_load %src, %row, %zero" +
                                  tile + " : " + m +
                                  "\n"
                                  "    %y = add %x, %ones : " +
                                  m +
                                  "\n"
                                  "    device_tile_store %y, %out, %row, %zero" +
                                  tile +
                                  "\n"
                                  "    yield\n"
                                  "  }\n"
                                  "}\n");
    SCOPED_TRACE(t);
    PipelineOptions options;
    options.target = &target::target_by_name("sm90");
    schedule::Schedule inline_fragments;
    inline_fragments.backend = schedule::Backend::SimdgroupInline;
    options.schedule = inline_fragments;
    const PipelineResult r = compile_to_source(std::move(kernel), options);
    const std::string& source = r.emitted.source;
    EXPECT_NE(source.find("metile_matrix_load("), std::string::npos) << source;
    EXPECT_NE(source.find("metile_matrix_store("), std::string::npos) << source;
    EXPECT_NE(source.find("__syncwarp()"), std::string::npos) << source;
    const std::string ptx = compile_to_ptx(source, "device_tiles");
    expect_entry(ptx, "device_tiles");
    for (const char* access : {"ld.global", "st.global", "ld.shared", "st.shared"})
      EXPECT_NE(ptx.find(std::string(access)), std::string::npos) << access << "\n" << ptx;
    EXPECT_NE(ptx.find("bar.warp.sync"), std::string::npos) << ptx;
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
