// The CUDA dialect's own renderings: math by precision mode, warp collectives and their
// helpers, the narrow float types only when used, the entry without bindings, the dtype and
// vector limits, and names that would shadow CUDA's built-ins.
#include <gtest/gtest.h>

#include <cmath>

#include "error_of.h"
#include "metal_kernels.h"
#include "metile/codegen/cuda/cuda_dialect.h"
#include "metile/codegen/emit.h"
#include "metile/support/errors.h"

namespace metile::codegen::testing {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

const target::Target& sm90() {
  return target::target_by_name("sm90");
}

std::string cuda_of(const ir::Kernel& k) {
  return emit(k, sm90()).source;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// out[tid] = fn(x[tid]) for each unary op, precise and fast.
ir::Kernel unary_kernel(DType dtype, const std::vector<std::pair<OpKind, bool>>& ops) {
  ir::Kernel k = metal_kernel("unary", 32, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(dtype), "read");
  auto out = b.add_param("out", Type::ptr(dtype), "write");
  auto tid = b.thread_index();
  auto v = b.load(b.ptr_add(x, tid));
  for (const auto& [kind, fast] : ops) v = b.unary(kind, v, fast);
  b.store(b.ptr_add(out, tid), v);
  return k;
}

TEST(CudaMath, PreciseKeepsIeeeFunctionsAndFastUsesIntrinsics) {
  const std::string s = cuda_of(unary_kernel(DType::f32, {{OpKind::Exp, false},
                                                          {OpKind::Exp, true},
                                                          {OpKind::Exp2, false},
                                                          {OpKind::Exp2, true},
                                                          {OpKind::Log, false},
                                                          {OpKind::Log, true},
                                                          {OpKind::Tanh, false},
                                                          {OpKind::Tanh, true},
                                                          {OpKind::Sin, true},
                                                          {OpKind::Sqrt, false},
                                                          {OpKind::Rsqrt, true}}));
  for (const char* call :
       {"= expf(", "= metile_fast_exp(", "= exp2f(", "= metile_fast_exp2(", "= logf(", "= __logf(",
        "= tanhf(", "= __tanhf(", "= __sinf(", "= sqrtf(", "= rsqrtf("})
    EXPECT_EQ(count(s, call), 1u) << call << "\n" << s;
  // The fast exponentials are ex2.approx with denormal results flushed (helpers, defined once).
  EXPECT_EQ(count(s, "float metile_fast_exp(float x) {"), 1u) << s;
  EXPECT_EQ(count(s, "float metile_fast_exp2(float x) {"), 1u) << s;
  EXPECT_EQ(count(s, "ex2.approx.ftz.f32"), 2u) << s;
}

TEST(CudaMath, FastExponentialHelpersOnlyWhenUsed) {
  const std::string s = cuda_of(unary_kernel(DType::f32, {{OpKind::Exp, false}}));
  EXPECT_EQ(s.find("metile_fast_exp"), std::string::npos) << s;
}

TEST(CudaMath, NarrowFloatsComputeInFloat) {
  const std::string s = cuda_of(unary_kernel(DType::f16, {{OpKind::Exp, true}}));
  EXPECT_NE(s.find("metile_half(metile_fast_exp(float("), std::string::npos) << s;
}

TEST(CudaMath, IntegerMinMaxAbsUseTheIntegerOverloads) {
  ir::Kernel k = metal_kernel("ints", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i64), "write");
  auto n = b.add_param("n", Type::scalar(DType::i64));
  auto m = b.add_param("m", Type::scalar(DType::i64));
  auto lo = b.op(OpKind::Min, n, m);
  auto hi = b.op(OpKind::Max, lo, m);
  b.store(out, b.unary(OpKind::Abs, hi));
  const std::string s = cuda_of(k);
  EXPECT_NE(s.find("long long v3 = min(n, m);"), std::string::npos) << s;
  EXPECT_NE(s.find("= max(v3, m);"), std::string::npos) << s;
  EXPECT_NE(s.find("= llabs("), std::string::npos) << s;
}

TEST(CudaTypes, NarrowFloatTypesOnlyWhenUsed) {
  EXPECT_EQ(cuda_of(vector_add_kernel()).find("struct"), std::string::npos);
  const std::string s = cuda_of(half_bfloat_kernel());
  EXPECT_EQ(count(s, "struct metile_half {"), 1u);
  EXPECT_EQ(count(s, "struct metile_bfloat16 {"), 1u);
  // The types come before the body that takes them.
  EXPECT_LT(s.find("struct metile_half {"), s.find("half_bfloat_body("));
}

TEST(CudaTypes, Bf16NeedsATargetWithBf16) {
  target::Target old_gpu = sm90();
  old_gpu.name = "sm75";
  old_gpu.supports_bf16 = false;
  const std::string message = error_of<UserError>([&] { emit(half_bfloat_kernel(), old_gpu); });
  EXPECT_NE(message.find("bf16 needs sm_80 or newer (target sm75)"), std::string::npos) << message;
}

TEST(CudaTypes, VectorValuesAreNotSupported) {
  EXPECT_THROW(emit(vec4_kernel(), sm90()), NotSupported);
  EXPECT_THROW(cuda_dialect().vector_type(DType::f32, 4), NotSupported);
}

// A loop step known only at run time is checked once before the loop and traps when it is
// not positive; a positive constant step needs no check.
TEST(CudaEntry, ARuntimeLoopStepIsCheckedBeforeTheLoopAndTraps) {
  ir::Kernel k = metal_kernel("strided", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto step = b.add_param("step", Type::scalar(DType::i32));
  auto by_step = b.begin_for(b.i32(0), n, step, {b.f32(0.0)});
  auto r = b.end_for({b.op(OpKind::Add, by_step.carried[0], b.f32(1.0))});
  auto by_two = b.begin_for(b.i32(0), n, b.i32(2), {r[0]});
  auto r2 = b.end_for({b.op(OpKind::Add, by_two.carried[0], b.f32(1.0))});
  b.store(out, r2[0]);
  const std::string s = cuda_of(k);
  EXPECT_EQ(count(s, "if (step <= 0) __trap();\n  for ("), 1u) << s;
  EXPECT_EQ(count(s, "__trap()"), 1u) << s;
}

TEST(CudaCollectives, ReductionsAreWarpButterfliesWrittenOncePerDtype) {
  ir::Kernel k = metal_kernel("reduce", 64, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto iout = b.add_param("iout", Type::ptr(DType::i32), "write");
  auto v = b.load(b.ptr_add(x, b.thread_index()));
  auto s1 = b.create1(OpKind::SimdSum, {v}, Type::scalar(DType::f32));
  auto s2 = b.create1(OpKind::SimdSum, {s1}, Type::scalar(DType::f32));
  b.store(out, s2);
  auto lane = b.create1(OpKind::SimdLane, {}, Type::scalar(DType::i32));
  b.store(iout, b.create1(OpKind::SimdMax, {lane}, Type::scalar(DType::i32)));
  const std::string s = cuda_of(k);
  EXPECT_EQ(count(s, "float metile_simd_sum(float v) {"), 1u) << s;
  EXPECT_EQ(count(s, "int metile_simd_max(int v) {"), 1u) << s;
  EXPECT_EQ(count(s, "v = max(v, other);"), 1u) << s;
  EXPECT_EQ(count(s, "__shfl_xor_sync(0xffffffffu, v, offset)"), 2u) << s;
  EXPECT_EQ(count(s, "= metile_simd_sum("), 2u) << s;
}

TEST(CudaCollectives, ShufflesTakeTheFullMaskAndAnIntLane) {
  ir::Kernel k = metal_kernel("shuffle", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::u32), "write");
  auto v = b.add_param("v", Type::scalar(DType::u32));
  auto lane = b.i32(3);
  auto a = b.create1(OpKind::SimdShuffle, {v, lane}, Type::scalar(DType::u32));
  auto c = b.create1(OpKind::SimdBroadcast, {a, lane}, Type::scalar(DType::u32));
  b.store(out, b.create1(OpKind::SimdShuffleXor, {c, lane}, Type::scalar(DType::u32)));
  const std::string s = cuda_of(k);
  EXPECT_EQ(count(s, "__shfl_sync(0xffffffffu, "), 2u) << s;
  EXPECT_EQ(count(s, "__shfl_xor_sync(0xffffffffu, "), 1u) << s;
  EXPECT_NE(s.find("const unsigned int v3 = __shfl_sync(0xffffffffu, v, int(v2));"),
            std::string::npos)
      << s;
}

TEST(CudaCollectives, SixtyFourBitValuesAreRejectedAsInMsl) {
  ir::Kernel k = metal_kernel("wide", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i64), "write");
  auto n = b.add_param("n", Type::scalar(DType::i64));
  b.store(out, b.create1(OpKind::SimdSum, {n}, Type::scalar(DType::i64)));
  const std::string message = error_of<UserError>([&] { emit(k, sm90()); });
  EXPECT_NE(message.find(
                "emit CUDA: simd_sum: i64 values are not supported by CUDA SIMD-group functions"),
            std::string::npos)
      << message;
}

// out[0] = simd_sum(v) in a threadgroup of `threads`.
ir::Kernel simd_sum_kernel(int64_t threads) {
  ir::Kernel k = metal_kernel("partial_warp", threads, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto v = b.add_param("v", Type::scalar(DType::f32));
  b.store(out, b.create1(OpKind::SimdSum, {v}, Type::scalar(DType::f32)));
  return k;
}

TEST(CudaCollectives, APartialWarpCannotUseThemButMetalCan) {
  const std::string message = error_of<NotSupported>([&] { emit(simd_sum_kernel(16), sm90()); });
  EXPECT_NE(
      message.find("emit CUDA: kernel 'partial_warp' runs 16 threads per threadgroup, not a whole "
                   "number of 32-wide SIMD groups, and uses simd_sum; on target sm90 SIMD-group "
                   "operations need whole SIMD groups (use num_threads = 32 or more)"),
      std::string::npos)
      << message;
  EXPECT_NO_THROW(emit(simd_sum_kernel(64), sm90()));
  EXPECT_NO_THROW(emit(simd_sum_kernel(16), target::target_by_name("host")));
  // Without SIMD-group operations a partial warp is fine.
  ir::Kernel plain = metal_kernel("partial_warp_plain", 16, 0);
  MetalBuilder b(plain);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  b.store(b.ptr_add(out, b.thread_index()), b.f32(1.0));
  EXPECT_NO_THROW(emit(plain, sm90()));
}

TEST(CudaEntry, ExternCGlobalWithoutBindingsAndDynamicSharedMemory) {
  const EmittedKernel e = emit(reduction_kernel(), sm90());
  EXPECT_NE(e.source.find("extern \"C\" __global__ void block_sum(\n    const float* x,\n    "
                          "float* out,\n    int n) {"),
            std::string::npos)
      << e.source;
  EXPECT_NE(e.source.find("  extern __shared__ __align__(16) unsigned char tg_mem[];\n"),
            std::string::npos);
  EXPECT_NE(e.source.find("const unsigned int simd_lane = threadIdx.x % 32u;"), std::string::npos);
  EXPECT_NE(e.source.find("__syncthreads();"), std::string::npos);
  EXPECT_NE(e.source.find("__syncwarp();"), std::string::npos);
  // The runtime sizes the dynamic block from the same ABI the MSL has.
  const KernelABI msl = emit(reduction_kernel(), target::default_target()).abi;
  EXPECT_EQ(e.abi.threadgroup_bytes, msl.threadgroup_bytes);
  EXPECT_EQ(e.abi.threads_per_threadgroup, msl.threads_per_threadgroup);
}

TEST(CudaLiterals, SpecialFloatsNeedNoHeader) {
  ir::Kernel k = metal_kernel("specials", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto hout = b.add_param("hout", Type::ptr(DType::f16), "write");
  b.store(out, b.constant(std::nan(""), DType::f32));
  b.store(hout, b.constant(-INFINITY, DType::f16));
  const std::string s = cuda_of(k);
  EXPECT_NE(s.find("= __int_as_float(0x7fffffff);"), std::string::npos) << s;
  EXPECT_NE(s.find("= metile_half(-__int_as_float(0x7f800000));"), std::string::npos) << s;
}

TEST(CudaNames, LocalsDoNotShadowCudaBuiltins) {
  for (const char* name : {"threadIdx", "blockDim", "warpSize", "min", "expf", "uint3", "half"})
    EXPECT_TRUE(cuda_dialect().is_reserved(name)) << name;
  EXPECT_FALSE(cuda_dialect().is_reserved("row"));
}

}  // namespace
}  // namespace metile::codegen::testing
