// sm90's tensor_ops backend (wgmma_tma, docs/hopper.md) without a GPU: the plan and its
// reasons, the restricted schedule's rejections, the Metal IR's asynchronous ops, and the
// emitted CUDA compiled by NVRTC for sm_90a through ptxas (a cubin).
#include <gtest/gtest.h>

#include <string>

#include "metile/kernels/kernels.h"
#include "metile/pipeline.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/support/errors.h"
#include "nvrtc_test_support.h"

namespace metile::codegen::testing {
namespace {

PipelineResult compile_gemm(ir::DType dtype, int64_t block_n, std::optional<schedule::Schedule> s,
                            int64_t block_m = 128, int64_t block_k = 64) {
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  options.schedule = s;
  return compile_to_source(kernels::gemm(dtype, dtype, block_m, block_n, block_k), options);
}

schedule::Schedule tensor_ops() {
  schedule::Schedule s;
  s.backend = schedule::Backend::TensorOps;
  return s;
}

std::string cubin(const PipelineResult& r) {
  using runtime::cuda::NvrtcOutput;
  // wgmma and setmaxnreg need the architecture-specific target
  EXPECT_EQ(runtime::cuda::gpu_architecture(9, 0, NvrtcOutput::Cubin), "sm_90a");
  return nvrtc_compile(r.emitted.source, r.emitted.abi.kernel_name, NvrtcOutput::Cubin);
}

TEST(CudaWgmma, TensorOpsGemmIsWarpSpecialisedAndCompilesForSm90a) {
  for (ir::DType dtype : {ir::DType::bf16, ir::DType::f16})
    for (int64_t block_n : {int64_t{256}, int64_t{128}}) {
      SCOPED_TRACE(std::string(ir::dtype_name(dtype)) + " BLOCK_N " + std::to_string(block_n));
      const PipelineResult r = compile_gemm(dtype, block_n, tensor_ops());
      const schedule::SchedulePlan& plan = r.report.schedule_plan;
      EXPECT_EQ(plan.strategy, schedule::MatrixStrategy::WgmmaTma);
      ASSERT_TRUE(plan.async_gemm);
      EXPECT_EQ(plan.async_gemm->stages, block_n == 256 ? 4 : 5);
      EXPECT_EQ(plan.threads_per_threadgroup, 384);
      EXPECT_EQ(r.emitted.abi.threads_total(), 384);
      ASSERT_EQ(r.emitted.abi.tensor_maps.size(), 2u);
      EXPECT_EQ(r.emitted.abi.tensor_maps[0].box_outer, 128);
      EXPECT_EQ(r.emitted.abi.tensor_maps[0].box_inner, 64);
      EXPECT_TRUE(r.emitted.abi.persistent);
      ASSERT_EQ(r.report.fused_epilogues.size(), 1u);
      EXPECT_EQ(r.report.fused_epilogues[0].backend.rfind("wgmma_tma", 0), 0u);
      EXPECT_EQ(r.report.fused_epilogues[0].output_conversion,
                "f32 -> " + std::string(ir::dtype_name(dtype)));
      const std::string& source = r.emitted.source;
      for (const char* ptx :
           {"cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "mbarrier.arrive.expect_tx",
            "wgmma.fence", "wgmma.commit_group", "wgmma.wait_group", "setmaxnreg.dec",
            "setmaxnreg.inc", "__grid_constant__", "__launch_bounds__(384, 1)"})
        EXPECT_NE(source.find(ptx), std::string::npos) << ptx;
      EXPECT_NE(source.find("wgmma.mma_async.sync.aligned.m64n" + std::to_string(block_n) +
                            "k16.f32." + std::string(ir::dtype_name(dtype))),
                std::string::npos);
      // The last wait hands each of the block_n / 2 accumulator registers through an add of
      // -0.0 inside its asm, so ptxas cannot hoist the epilogue's reads above it.
      const size_t wait = source.find("wgmma.wait_group.sync.aligned 0;");
      ASSERT_NE(wait, std::string::npos);
      const std::string last = "add.f32 %" + std::to_string(block_n / 2 - 1) + ", %" +
                               std::to_string(block_n / 2 - 1) + ", 0f80000000;";
      const size_t end = source.find(last, wait);
      ASSERT_NE(end, std::string::npos) << last;
      EXPECT_EQ(source.substr(wait, end - wait).find("\""), std::string::npos)
          << "the adds are in the wait's own asm";
      // The output: lanes q and q ^ 1 swap register pairs (two shuffles per four values), so
      // each thread stores four adjacent columns of a row at once (an eighth of the tile's
      // columns per thread), guarded by the row's and the column's bound and the alignment;
      // the column indices are 64-bit, widened once (no widened check of each piece's indices).
      EXPECT_EQ(r.report.grouped_stores, block_n / 8);
      size_t shuffles = 0;
      for (size_t at = source.find("__shfl_xor_sync"); at != std::string::npos;
           at = source.find("__shfl_xor_sync", at + 1))
        ++shuffles;
      EXPECT_EQ(shuffles, static_cast<size_t>(block_n / 4));
      ASSERT_EQ(r.report.layout_conversions.size(), 1u);
      EXPECT_EQ(r.report.layout_conversions[0].mechanism, "simd_shuffle");
      const size_t widened = source.find("static_cast<long long>");
      ASSERT_NE(widened, std::string::npos);
      EXPECT_EQ(source.find("static_cast<long long>", widened + 1), std::string::npos);
      EXPECT_FALSE(cubin(r).empty());
    }
}

// An f32 output moves the accumulator's own values (no conversion to look through): each
// thread's four columns are one 16-byte store.
TEST(CudaWgmma, AnF32OutputIsStoredInSixteenBytePieces) {
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  options.schedule = tensor_ops();
  const PipelineResult r =
      compile_to_source(kernels::gemm(ir::DType::bf16, ir::DType::f32, 128, 256, 64), options);
  EXPECT_EQ(r.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaTma);
  EXPECT_EQ(r.report.grouped_stores, 256 / 8);
  EXPECT_NE(r.emitted.source.find("st.global.v4.f32"), std::string::npos);
  EXPECT_FALSE(cubin(r).empty());
}

TEST(CudaWgmma, AutoChoosesWgmmaForTheCanonicalTileAndSaysWhyNotOtherwise) {
  const PipelineResult chosen = compile_gemm(ir::DType::bf16, 256, std::nullopt);
  EXPECT_EQ(chosen.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaTma);
  EXPECT_NE(chosen.report.schedule_plan.backend_reason.find("auto: "), std::string::npos);
  const PipelineResult other = compile_gemm(ir::DType::bf16, 64, std::nullopt, 64, 16);
  EXPECT_EQ(other.report.schedule_plan.strategy, schedule::MatrixStrategy::MmaSync);
  EXPECT_NE(
      other.report.schedule_plan.backend_reason.find("wgmma_tma not chosen: its tile is 64x64x16"),
      std::string::npos)
      << other.report.schedule_plan.backend_reason;
  // The SIMD-group backend asked for: its software pipeline runs the tile on wgmma.
  schedule::Schedule simdgroup;
  simdgroup.backend = schedule::Backend::Simdgroup;
  EXPECT_EQ(compile_gemm(ir::DType::bf16, 256, simdgroup).report.schedule_plan.strategy,
            schedule::MatrixStrategy::WgmmaPipelined);
}

TEST(CudaWgmma, AutoLeavesTmaWhenTheLaunchFoundAStrideItCannotDescribe) {
  // Python's launch checks every argument's divisibility (divisibility_checked): an operand
  // address or row stride without the fact is no multiple of 16 bytes, which TMA needs.
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  ir::Kernel checked = kernels::gemm(ir::DType::bf16, ir::DType::bf16, 128, 256, 64);
  checked.attrs["divisibility_checked"] = int64_t{1};
  const PipelineResult unaligned = compile_to_source(checked, options);
  EXPECT_EQ(unaligned.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaPipelined);
  EXPECT_NE(unaligned.report.schedule_plan.backend_reason.find(
                "wgmma_tma not chosen: the left operand 'left' has an address or a row stride "
                "that is no multiple of 16 bytes (TMA's rule)"),
            std::string::npos)
      << unaligned.report.schedule_plan.backend_reason;
  for (ir::Param& p : checked.params)
    if (checked.type(p.value).is_pointer() || p.name == "inner" || p.name == "columns")
      p.divisibility = 16;
  EXPECT_EQ(compile_to_source(checked, options).report.schedule_plan.strategy,
            schedule::MatrixStrategy::WgmmaTma);
}

void expect_rejected(const schedule::Schedule& s, const std::string& message,
                     int64_t block_m = 128) {
  try {
    compile_gemm(ir::DType::bf16, 256, s, block_m);
    ADD_FAILURE() << "accepted; expected: " << message;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(CudaWgmma, TheRestrictedScheduleRejectsControlsItCannotHonour) {
  schedule::Schedule s = tensor_ops();
  s.vector_width = 4;
  expect_rejected(s,
                  "Schedule(vector_width=4) cannot be met for kernel 'gemm_bf16': the wgmma_tma "
                  "strategy's copies are TMA boxes");
  s = tensor_ops();
  s.staging = schedule::Staging::Threadgroup;
  expect_rejected(s,
                  "Schedule(staging='threadgroup') cannot be met for kernel 'gemm_bf16': the "
                  "wgmma_tma strategy stages its operands itself");
  s = tensor_ops();
  s.double_buffer = false;
  expect_rejected(s, "Schedule(double_buffer=False) cannot be met");
  s = tensor_ops();
  s.num_simdgroups = 8;
  expect_rejected(s, "a wgmma_tma kernel runs 12 SIMD groups");
  expect_rejected(tensor_ops(),
                  "target sm90's tensor backend (wgmma_tma) cannot lower it: its tile is "
                  "64x256x64",
                  64);
}

}  // namespace
}  // namespace metile::codegen::testing
