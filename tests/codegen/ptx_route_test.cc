// The PTX route (codegen/ptx/): the PTX of hand-built Metal IR kernels states what it should
// (masked accesses as predicated ld/st, warp reductions as shfl.sync butterflies, barriers),
// ptxas accepts the PTX of the library's vector add, softmax and RMSNorm for sm_90 (skipped,
// with the reason, where ptxas is absent), and what the route cannot render is NotSupported
// naming the op.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "metal_kernels.h"
#include "metile/codegen/emit.h"
#include "metile/kernels/kernels.h"
#include "metile/pass_registry.h"
#include "metile/pipeline.h"
#include "metile/support/errors.h"

namespace metile::codegen::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const target::Target& sm90() {
  return target::target_by_name("sm90");
}

std::string ptx_of(const ir::Kernel& k) {
  EmittedKernel e = emit(k, sm90(), RenderRoute::Ptx);
  EXPECT_TRUE(e.abi.source_is_ptx);
  return e.source;
}

std::string ptxas_path() {
  for (const char* p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (std::filesystem::exists(p)) return p;
  return "";
}

// ptxas's verdict on `ptx` for sm_90: "" when it accepts it, else its log.
std::string ptxas_errors(const std::string& ptx, const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / "metile_ptx_route_test";
  std::filesystem::create_directories(dir);
  const auto file = dir / (name + ".ptx");
  std::ofstream(file) << ptx;
  const std::string log = (dir / (name + ".log")).string();
  const std::string command = ptxas_path() + " -arch=sm_90 " + file.string() + " -o " +
                              (dir / (name + ".cubin")).string() + " > " + log + " 2>&1";
  if (std::system(command.c_str()) == 0) return "";
  std::ifstream in(log);
  return std::string(std::istreambuf_iterator<char>(in), {}) + "\n" + ptx;
}

TEST(PtxRoute, VectorAddIsPredicatedGlobalAccesses) {
  const std::string ptx = ptx_of(vector_add_kernel());
  EXPECT_THAT(ptx, HasSubstr(".visible .entry vector_add("));
  EXPECT_THAT(ptx, HasSubstr(".maxntid 256, 1, 1"));
  EXPECT_THAT(ptx, HasSubstr("cvta.to.global.u64"));
  EXPECT_THAT(ptx, HasSubstr("mad.wide.s32"));
  EXPECT_THAT(ptx, HasSubstr("setp.lt.s32"));
  // The masked loads keep `other` where the mask is false; the store is guarded.
  EXPECT_THAT(ptx, ::testing::ContainsRegex(R"(@%v[0-9]+ ld\.global\.f32)"));
  EXPECT_THAT(ptx, ::testing::ContainsRegex(R"(@%v[0-9]+ st\.global\.f32)"));
  EXPECT_THAT(ptx, Not(HasSubstr("shfl")));
}

TEST(PtxRoute, ReductionIsAButterflyThroughSharedMemory) {
  const std::string ptx = ptx_of(reduction_kernel());
  EXPECT_THAT(ptx, HasSubstr(".shared .align 16 .b8 metile_smem[16];"));
  for (const char* offset : {"16", "8", "4", "2", "1"})
    EXPECT_THAT(
        ptx, ::testing::ContainsRegex(std::string(R"(shfl\.sync\.bfly\.b32 %t[0-9]+, %v[0-9]+, )") +
                                      offset + ", 0x1f, 0xffffffff;"));
  EXPECT_THAT(ptx, HasSubstr("bar.sync 0;"));
  EXPECT_THAT(ptx, HasSubstr("bar.warp.sync -1;"));
  EXPECT_THAT(ptx, HasSubstr("st.shared.f32"));
  EXPECT_THAT(ptx, HasSubstr("ld.shared.f32"));
  EXPECT_THAT(ptx, HasSubstr("mov.u32 %t0, %tid.x;"));  // simd_group = tid.x >> 5
}

TEST(PtxRoute, LoopsAndIfsBecomeLabelsAndBranches) {
  const std::string loop = ptx_of(fibonacci_kernel());
  EXPECT_THAT(loop, HasSubstr("$L_for_head0:"));
  EXPECT_THAT(loop, HasSubstr("bra $L_for_head0;"));
  EXPECT_THAT(loop, HasSubstr("$L_for_end1:"));
  const std::string branch = ptx_of(if_results_kernel());
  EXPECT_THAT(branch, ::testing::ContainsRegex(R"(@!%v[0-9]+ bra \$L_else0;)"));
  EXPECT_THAT(branch, HasSubstr("cvt.rn.f32.s32"));
}

TEST(PtxRoute, PtxasAcceptsTheHandBuiltKernels) {
  if (ptxas_path().empty()) GTEST_SKIP() << "ptxas not found (CUDA toolkit absent)";
  using Build = ir::Kernel (*)();
  const std::pair<const char*, Build> kernels[] = {{"vector_add", vector_add_kernel},
                                                   {"block_sum", reduction_kernel},
                                                   {"fibonacci", fibonacci_kernel},
                                                   {"if_results", if_results_kernel}};
  for (const auto& [name, build] : kernels)
    EXPECT_EQ(ptxas_errors(ptx_of(build()), name), "") << name;
}

// The library kernels through the whole pipeline with Schedule(route="ptx"), f32 storage, in
// each math mode.
TEST(PtxRoute, PtxasAcceptsTheLibraryKernels) {
  if (ptxas_path().empty()) GTEST_SKIP() << "ptxas not found (CUDA toolkit absent)";
  using Build = ir::Kernel (*)(ir::DType, int64_t);
  const std::pair<const char*, Build> library[] = {{"vector_add", kernels::vector_add},
                                                   {"softmax", kernels::softmax},
                                                   {"rms_norm", kernels::rms_norm}};
  for (const auto& [name, build] : library)
    for (int64_t block : {int64_t{256}, int64_t{1024}})
      for (MathMode math : {MathMode::Default, MathMode::Relaxed}) {
        PipelineOptions options;
        options.target = &sm90();
        options.math = math;
        options.schedule = schedule::Schedule{};
        options.schedule->route = schedule::Route::Ptx;
        const PipelineResult r = compile_to_source(build(ir::DType::f32, block), options);
        SCOPED_TRACE(std::string(name) + " block " + std::to_string(block));
        EXPECT_TRUE(r.emitted.abi.source_is_ptx);
        EXPECT_THAT(r.emitted.source, HasSubstr(".entry " + r.emitted.abi.kernel_name + "("));
        EXPECT_EQ(ptxas_errors(r.emitted.source, name), "");
      }
}

// A grouped access yields its vector out of an if (packed path, else the scalar tail): every
// component moves, read from the packed load's registers. (The H100 run of the library
// kernels at 282ae6e returned garbage when only the vector's name moved.)
TEST(PtxRoute, AVectorThroughAnIfMovesEveryComponent) {
  PipelineOptions options;
  options.target = &sm90();
  options.schedule = schedule::Schedule{};
  options.schedule->route = schedule::Route::Ptx;
  const std::string ptx =
      compile_to_source(kernels::vector_add(ir::DType::f32, 1024), options).emitted.source;
  std::smatch load;
  ASSERT_TRUE(std::regex_search(ptx, load, std::regex(R"(ld\.global\.v4\.f32 \{(%v[0-9]+)_0, )")));
  const std::string vector = load[1];
  for (int e = 0; e < 4; ++e)
    EXPECT_THAT(ptx, ::testing::ContainsRegex("mov\\.b32 %t[0-9]+, " + vector + "_" +
                                              std::to_string(e) + ";"));
  EXPECT_THAT(ptx, Not(HasSubstr(".reg .f32 " + vector + ";")));
}

TEST(PtxRoute, WhatItCannotRenderIsNotSupportedNamingIt) {
  EXPECT_THAT([] { emit(half_bfloat_kernel(), sm90(), RenderRoute::Ptx); },
              ::testing::ThrowsMessage<NotSupported>(
                  HasSubstr("op 'load' of f16 values is not supported on the PTX route")));
  EXPECT_THAT([] { emit(bytes_kernel(), sm90(), RenderRoute::Ptx); },
              ::testing::ThrowsMessage<NotSupported>(
                  HasSubstr("op 'constant' on i8 values is not supported on the PTX route")));
  ir::Kernel k = metal_kernel("floordiv_kernel", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  b.store(out, b.op(ir::OpKind::FloorDiv, b.thread_index(), b.i32(3)));
  EXPECT_THAT([&] { emit(k, sm90(), RenderRoute::Ptx); },
              ::testing::ThrowsMessage<NotSupported>(
                  HasSubstr("op 'floordiv' is not supported on the PTX route")));
}

TEST(PtxRoute, OnlyCudaTargetsTakeThePtxRoute) {
  schedule::Schedule ptx;
  ptx.route = schedule::Route::Ptx;
  EXPECT_EQ(emit_pass_for(sm90(), ptx), "emit_ptx");
  EXPECT_EQ(emit_pass_for(sm90(), schedule::Schedule{}), "emit_cuda");
  EXPECT_THAT([&] { emit_pass_for(target::target_by_name("host"), ptx); },
              ::testing::ThrowsMessage<NotSupported>(HasSubstr("needs a CUDA target")));
  EXPECT_EQ(ptx.key().find("route=ptx") != std::string::npos, true);
  EXPECT_EQ(schedule::Schedule{}.key().find("route"), std::string::npos);
  EXPECT_EQ(schedule::Schedule::from_json(ptx.to_json()), ptx);
}

}  // namespace
}  // namespace metile::codegen::testing
