// emit's behaviour on the MSL dialect: the ABI, the body + entry shape, control flow, naming and
// the errors for what it cannot render.
#include <gtest/gtest.h>

#include "error_of.h"
#include "metal_kernels.h"
#include "metile/codegen/emit.h"
#include "metile/ir/parser.h"

namespace metile::codegen::testing {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

std::string msl_of(const ir::Kernel& k) {
  return emit(k, target::default_target()).source;
}

TEST(EmitMsl, AbiDescribesParamsGeometryAndBlock) {
  const KernelABI abi = emit(reduction_kernel(), target::default_target()).abi;
  EXPECT_EQ(abi.kernel_name, "block_sum");
  EXPECT_EQ(abi.body_name, "block_sum_body");
  ASSERT_EQ(abi.params.size(), 3u);
  EXPECT_EQ(abi.params[0].name, "x");
  EXPECT_EQ(abi.params[0].kind, AbiParam::Kind::Buffer);
  EXPECT_EQ(abi.params[0].access, "read");
  EXPECT_EQ(abi.params[1].access, "write");
  EXPECT_EQ(abi.params[2].kind, AbiParam::Kind::Scalar);
  EXPECT_EQ(abi.params[2].dtype, DType::i32);
  EXPECT_EQ(abi.threads_per_threadgroup, (std::array<int, 3>{64, 1, 1}));
  EXPECT_EQ(abi.threadgroup_bytes, 16);
}

TEST(EmitMsl, BodySignatureFollowsKernelAbi) {
  const std::string src = msl_of(vector_add_kernel());
  EXPECT_NE(src.find("static inline void vector_add_body(\n"
                     "    device const float* x,\n"
                     "    device const float* y,\n"
                     "    device float* out,\n"
                     "    int n,\n"
                     "    threadgroup uchar* tg_mem,\n"
                     "    uint3 threadgroup_position_in_grid,\n"
                     "    uint3 threadgroups_per_grid,\n"
                     "    uint3 thread_position_in_threadgroup,\n"
                     "    uint3 threads_per_threadgroup,\n"
                     "    uint simd_lane,\n"
                     "    uint simd_group) {\n"),
            std::string::npos)
      << src;
}

TEST(EmitMsl, EntryBindsBuffersDeclaresBlockAndCallsBody) {
  const std::string src = msl_of(vector_add_kernel());
  EXPECT_NE(src.find("kernel void vector_add(\n    device const float* x [[buffer(0)]],"),
            std::string::npos);
  EXPECT_NE(src.find("constant int& n [[buffer(3)]]"), std::string::npos);
  EXPECT_NE(src.find("uint simd_lane [[thread_index_in_simdgroup]]"), std::string::npos);
  // No threadgroup memory used: a 16-byte block anyway, since arrays cannot be empty.
  EXPECT_NE(src.find("threadgroup uchar tg_mem[16] __attribute__((aligned(16)));"),
            std::string::npos);
  EXPECT_NE(src.find("vector_add_body(x, y, out, n, tg_mem, threadgroup_position_in_grid, "
                     "threadgroups_per_grid, thread_position_in_threadgroup, "
                     "threads_per_threadgroup, simd_lane, simd_group);"),
            std::string::npos);
  EXPECT_NE(msl_of(reduction_kernel()).find("threadgroup uchar tg_mem[16]"), std::string::npos);
}

TEST(EmitMsl, MaskedTailLoadsAndStores) {
  const std::string src = msl_of(vector_add_kernel());
  EXPECT_NE(src.find("const bool mask = idx < n;"), std::string::npos) << src;
  EXPECT_NE(src.find("= mask ? "), std::string::npos) << src;
  EXPECT_NE(src.find("if (mask) { "), std::string::npos) << src;
  EXPECT_NE(src.find("[0] = sum; }"), std::string::npos) << src;
}

TEST(EmitMsl, SwapLoopAssignsThroughTemporaries) {
  const std::string src = msl_of(fibonacci_kernel());
  // (a, b) -> (b, a + b): `a = b; b = next;` would be right by luck; the emitter must not
  // depend on the order, so both go through temporaries declared before any assignment.
  const size_t t0 = src.find("const int metile_next0 = b;");
  const size_t t1 = src.find("const int metile_next1 = next;");
  const size_t a = src.find("a = metile_next0;");
  const size_t b = src.find("b = metile_next1;");
  ASSERT_NE(t0, std::string::npos) << src;
  ASSERT_NE(t1, std::string::npos) << src;
  ASSERT_NE(a, std::string::npos) << src;
  ASSERT_NE(b, std::string::npos) << src;
  EXPECT_LT(std::max(t0, t1), std::min(a, b));
  // The loop variables are mutable and declared before the loop.
  EXPECT_LT(src.find("int a = "), src.find("for (int i = "));
}

TEST(EmitMsl, LoopWithoutCrossReadsAssignsDirectly) {
  ir::Kernel k = metal_kernel("accumulate", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto start = b.i32(0);
  auto step = b.i32(1);
  auto acc0 = b.f32(0.0);
  auto loop = b.begin_for(start, n, step, {acc0, b.f32(1.0)});
  b.named(loop.carried[0], "acc");
  b.named(loop.carried[1], "unchanged");
  auto next = b.named(b.op(OpKind::Add, loop.carried[0], b.f32(1.0)), "acc_next");
  auto r = b.end_for({next, loop.carried[1]});
  b.store(out, b.op(OpKind::Add, r[0], r[1]));
  const std::string src = msl_of(k);
  EXPECT_NE(src.find("    acc = acc_next;\n  }"), std::string::npos) << src;
  EXPECT_EQ(src.find("metile_next"), std::string::npos) << src;
  EXPECT_EQ(src.find("    unchanged = "), std::string::npos) << src;
}

TEST(EmitMsl, IfResultsAreDeclaredBeforeTheIf) {
  const std::string src = msl_of(if_results_kernel());
  const size_t decl = src.find("float value;\n  int offset;\n  if (in_range) {");
  ASSERT_NE(decl, std::string::npos) << src;
  EXPECT_NE(src.find("    offset = tid;\n  } else {"), std::string::npos) << src;
  EXPECT_NE(src.find("    value = v"), std::string::npos) << src;
}

TEST(EmitMsl, HalfAndBfloatMathGoesThroughFloat) {
  const std::string src = msl_of(half_bfloat_kernel());
  EXPECT_NE(src.find("half(precise::exp(float(h)))"), std::string::npos) << src;
  EXPECT_NE(src.find("half(fast::exp2(float(h)))"), std::string::npos) << src;
  EXPECT_NE(src.find("bfloat(precise::tanh(float(bf)))"), std::string::npos) << src;
  EXPECT_NE(src.find("half(0.5f)"), std::string::npos) << src;
  // 0.1 rounded to bfloat, printed exactly.
  EXPECT_NE(src.find("bfloat(0.100097656f)"), std::string::npos) << src;
  EXPECT_NE(src.find("static_cast<bfloat>(static_cast<float>(h))"), std::string::npos) << src;
  EXPECT_NE(src.find("bfloat(simd_shuffle_xor(float("), std::string::npos) << src;
  EXPECT_NE(src.find("device bfloat* out_b"), std::string::npos) << src;
}

TEST(EmitMsl, Bf16NeedsMsl31) {
  const std::string message =
      error_of([] { emit(half_bfloat_kernel(), target::target_by_name("apple-m1")); });
  EXPECT_NE(message.find("bf16 needs MSL 3.1 (target apple-m1"), std::string::npos) << message;
  EXPECT_NO_THROW(emit(half_bfloat_kernel(), target::target_by_name("apple-m3")));
}

// A double kernel: MSL on Apple GPUs has no double, the host emulator's CPU and CUDA do.
ir::Kernel f64_kernel() {
  ir::Kernel k = metal_kernel("f64", 32, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f64), "read_write");
  auto p = b.ptr_add(x, b.thread_index());
  b.store(p, b.unary(OpKind::Sqrt, b.op(OpKind::Mul, b.load(p), b.constant(0.1, DType::f64))));
  return k;
}

TEST(EmitMsl, F64IsNotSupportedOnAppleGpus) {
  const std::string message =
      error_of<NotSupported>([] { emit(f64_kernel(), target::target_by_name("apple-m3")); });
  EXPECT_NE(message.find("f64 (float64) is not available on Apple GPUs: MSL has no double "
                         "(target apple-m3)"),
            std::string::npos)
      << message;
  const std::string host = emit(f64_kernel(), target::target_by_name("host")).source;
  EXPECT_NE(host.find("device double* x"), std::string::npos) << host;
  // The constant keeps its double precision (no f suffix), the math its double function.
  EXPECT_NE(host.find("0.10000000000000001"), std::string::npos) << host;
  const std::string cuda = emit(f64_kernel(), target::target_by_name("sm90")).source;
  EXPECT_NE(cuda.find("sqrt("), std::string::npos) << cuda;
  EXPECT_EQ(cuda.find("sqrtf("), std::string::npos) << cuda;
}

// device_print and device_assert run on the host emulator; an Apple GPU has no such calls.
TEST(EmitMsl, DebuggingOpsAreRejectedOnAppleGpus) {
  for (const char* op :
       {"assert %yes, %yes, %t {message = \"m\"}", "print %yes, %t {format = \"%i\"}"}) {
    const ir::Kernel k = ir::parse(
        std::string("metal.kernel @debugging()\n"
                    "    attributes {threadgroup_bytes = 0, threads_per_threadgroup = 32} {\n"
                    "  %t = thread_index {axis = 0} : i32\n"
                    "  %yes = constant {value = 1} : i1\n  ") +
        op + "\n}\n");
    const std::string message =
        error_of<NotSupported>([&] { emit(k, target::target_by_name("apple-m3")); });
    EXPECT_NE(message.find("is not supported on Apple GPUs (target apple-m3): Metal shaders "
                           "cannot stop with a message or print"),
              std::string::npos)
        << message;
    EXPECT_NO_THROW(emit(k, target::default_target()));
  }
}

TEST(EmitMsl, VectorAccessCastsThePointer) {
  const std::string src = msl_of(vec4_kernel());
  EXPECT_NE(src.find("const float4 v = ((device const float4*)("), std::string::npos) << src;
  EXPECT_NE(src.find("const float4 sq = v * v;"), std::string::npos) << src;
  EXPECT_NE(src.find("const bool4 "), std::string::npos) << src;
  EXPECT_NE(src.find("select(v, sq, "), std::string::npos) << src;
  EXPECT_NE(src.find("fast::exp("), std::string::npos) << src;
  EXPECT_NE(src.find(") { ((device float4*)("), std::string::npos) << src;
}

TEST(EmitMsl, FloorDivHelperOnlyWhenUsed) {
  EXPECT_EQ(msl_of(vector_add_kernel()).find("metile_floordiv"), std::string::npos);
  ir::Kernel k = metal_kernel("floordiv", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i32), "write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  b.store(out, b.op(OpKind::FloorDiv, b.thread_index(), n));
  const std::string src = msl_of(k);
  EXPECT_NE(src.find("static inline int metile_floordiv(int a, int b) {"), std::string::npos)
      << src;
}

TEST(EmitMsl, NamesComeFromHintsAndStayUnique) {
  ir::Kernel k = metal_kernel("names", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto one = b.named(b.f32(1.0), "float");  // reserved word
  auto two = b.named(b.f32(2.0), "x.y");    // not an identifier
  auto three = b.named(b.f32(3.0), "x_y");  // clashes with the sanitised hint above
  auto four = b.named(b.f32(4.0), "out");   // clashes with a parameter
  auto left = b.op(OpKind::Add, one, two);
  auto right = b.op(OpKind::Add, three, four);
  b.store(out, b.op(OpKind::Add, left, right));
  const std::string src = msl_of(k);
  EXPECT_NE(src.find("const float float_1 = 1.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float x_y = 2.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float x_y_3 = 3.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float out_4 = 4.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float v5 = float_1 + x_y;"), std::string::npos) << src;
}

TEST(EmitMsl, HintsNeverShadowWhatTheBodyCalls) {
  ir::Kernel k = metal_kernel("shadows", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::f32), "write");
  auto x = b.named(b.f32(1.0), "simd_sum");
  auto y = b.named(b.f32(2.0), "float4");
  auto z = b.named(b.f32(3.0), "a__b");
  auto s = b.named(b.create1(OpKind::SimdSum, {x}, Type::scalar(DType::f32)), "metile_x");
  auto sum = b.op(OpKind::Add, s, y);
  b.store(out, b.op(OpKind::Add, sum, z));
  const std::string src = msl_of(k);
  EXPECT_NE(src.find("const float simd_sum_1 = 1.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float float4_2 = 2.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float v3 = 3.0f;"), std::string::npos) << src;
  EXPECT_NE(src.find("const float v4 = simd_sum(simd_sum_1);"), std::string::npos) << src;
}

// A parameter named like a type or a built-in function (Liger's rope takes `cos` and `sin`)
// is renamed in the source only; the ABI keeps the user's name.
TEST(EmitMsl, AReservedParameterNameIsRenamedInTheSource) {
  ir::Kernel k = metal_kernel("renamed_params", 32, 0);
  MetalBuilder b(k);
  auto half = b.add_param("half", Type::ptr(DType::f32), "write");
  auto cos = b.add_param("cos", Type::ptr(DType::f32), "write");
  b.store(half, b.f32(1.0));
  b.store(cos, b.f32(2.0));
  const std::string src = msl_of(k);
  EXPECT_NE(src.find("device float* half_arg"), std::string::npos) << src;
  EXPECT_NE(src.find("device float* cos_arg"), std::string::npos) << src;
  EXPECT_EQ(src.find("device float* cos "), std::string::npos) << src;
}

TEST(EmitMslErrors, AParameterNameThatIsNoIdentifier) {
  ir::Kernel k = metal_kernel("bad_param", 32, 0);
  MetalBuilder b(k);
  b.add_param("two words", Type::ptr(DType::f32), "write");
  const std::string message = error_of([&] { msl_of(k); });
  EXPECT_NE(message.find("parameter name 'two words' is not usable in MSL (not an identifier)"),
            std::string::npos)
      << message;
}

TEST(EmitMslErrors, TileIrIsRejected) {
  ir::Kernel k = vector_add_kernel();
  k.dialect = ir::Dialect::Tile;
  const std::string message = error_of([&] { msl_of(k); });
  EXPECT_NE(message.find("kernel 'vector_add' is tile IR; the emitter takes Metal IR"),
            std::string::npos)
      << message;
}

TEST(EmitMslErrors, StoreThroughReadOnlyBuffer) {
  ir::Kernel k = metal_kernel("write_input", 32, 0);
  MetalBuilder b(k);
  auto x = b.add_param("x", Type::ptr(DType::f32), "read");
  auto p = b.ptr_add(x, b.thread_index());
  b.store(p, b.f32(1.0));
  const std::string message = error_of([&] { msl_of(k); });
  EXPECT_NE(message.find("store: stores through 'v2', which points into a read-only buffer"),
            std::string::npos)
      << message;
}

TEST(EmitMslErrors, SimdSumOnI64IsNotSupported) {
  ir::Kernel k = metal_kernel("simd_long", 32, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i64), "write");
  auto v = b.create1(OpKind::Cast, {b.thread_index()}, Type::scalar(DType::i64));
  b.store(out, b.create1(OpKind::SimdSum, {v}, Type::scalar(DType::i64)));
  const std::string message = error_of([&] { msl_of(k); });
  EXPECT_NE(message.find("simd_sum: i64 values are not supported by MSL SIMD-group functions"),
            std::string::npos)
      << message;
}

TEST(EmitMslErrors, ThreadgroupMemoryBeyondTarget) {
  ir::Kernel k = metal_kernel("too_big", 32, 65536);
  const std::string message = error_of([&] { msl_of(k); });
  EXPECT_NE(message.find("needs 65536 bytes of threadgroup memory; target host has 32768"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace metile::codegen::testing
