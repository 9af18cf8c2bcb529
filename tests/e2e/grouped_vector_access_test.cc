// Grouped vector accesses end to end on the default device: each thread loads and stores
// four adjacent f32, f16 or bf16 elements at a runtime offset, so the pipeline groups them
// into packed accesses (MSL packed_float4 / packed_half4 / packed_bfloat4; CUDA float4 /
// 8-byte structs of halves behind an alignment test). Ragged lengths and shifted (misaligned)
// origins must give exactly the scalar result; the buffers end where the data ends, so a
// speculative read past a ragged tail would fault on the host target.
#include <gtest/gtest.h>

#include <vector>

#include "metile/compile.h"
#include "metile/dsl/dsl.h"
#include "metile/support/half_bfloat.h"

namespace metile {
namespace {

using namespace metile::dsl;

constexpr int kThreads = 64;
constexpr int kPerThread = 4;
constexpr int kBlock = kThreads * kPerThread;

// out[j] = 2 * x[j] + 1 for j = off + 256 * program + 4 * thread + r, where j < n.
KernelFunction scale_kernel(DType dtype) {
  return [dtype](KernelContext& k) {
    k.set_num_threads(kThreads);
    auto x = k.buffer("x", dtype, "read");
    auto out = k.buffer("out", dtype, "write");
    auto n = k.scalar("n", i32);
    auto off = k.scalar("off", i32);
    auto first = program_id(0) * kBlock + thread_id() * kPerThread + off;
    std::vector<Value> values;
    for (int r = 0; r < kPerThread; ++r) values.push_back(load(x + (first + r), first + r < n, 0));
    for (int r = 0; r < kPerThread; ++r) store(out + (first + r), values[r] * 2 + 1, first + r < n);
  };
}

// An f16 element as the kernel stores it.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  explicit Half(float f) : bits(float_to_half_bits(f)) {}
  explicit operator float() const { return half_bits_to_float(bits); }
};

// A bf16 element as the kernel stores it.
struct Bfloat {
  uint16_t bits = 0;
  Bfloat() = default;
  explicit Bfloat(float f) : bits(float_to_bfloat_bits(f)) {}
  explicit operator float() const { return bfloat_bits_to_float(bits); }
};

template <typename T>
void expect_scaled(DType dtype, int n, int off, int vector_width, bool grouped) {
  SCOPED_TRACE("n = " + std::to_string(n) + ", off = " + std::to_string(off));
  std::vector<T> x(n, T(0.0f)), out(n, T(-7.0f));
  for (int j = 0; j < n; ++j) x[j] = T(static_cast<float>(j % 200 - 100));
  CompileOptions options;
  if (vector_width) options.schedule.emplace().vector_width = vector_width;
  const std::string name = "scale_" + std::string(ir::dtype_name(dtype));
  auto compiled = compile(name, scale_kernel(dtype), {}, options);
  EXPECT_EQ(compiled->report().grouped_loads, grouped ? 1 : 0);
  EXPECT_EQ(compiled->report().grouped_stores, grouped ? 1 : 0);
  const int64_t bytes = static_cast<int64_t>(n) * static_cast<int64_t>(sizeof(T));
  const KernelArg args[] = {BufferView{x.data(), bytes, dtype},
                            BufferView{out.data(), bytes, dtype}, int64_t{n}, int64_t{off}};
  const int64_t programs = (n - off + kBlock - 1) / kBlock;
  compiled->launch({programs, 1, 1}, args);
  for (int j = 0; j < n; ++j) {
    const float expected = j < off ? -7.0f : 2.0f * static_cast<float>(x[j]) + 1.0f;
    ASSERT_EQ(static_cast<float>(out[j]), expected) << "element " << j;
  }
}

TEST(GroupedVectorAccess, PacksFourAdjacentF32AccessesOfEveryThread) {
  auto compiled = compile("scale_f32", scale_kernel(f32));
  const bool cuda = compiled->device().target().language == target::Language::CUDA;
  EXPECT_NE(compiled->source().find(cuda ? "float4" : "packed_float4"), std::string::npos);
  for (int n : {1024, 1000, 1003, 5})
    for (int off : {0, 1, 2, 3}) expect_scaled<float>(f32, n, off, 0, true);
}

TEST(GroupedVectorAccess, PacksFourAdjacentF16Accesses) {
  for (int n : {1024, 1001})
    for (int off : {0, 1, 3}) expect_scaled<Half>(f16, n, off, 0, true);
}

TEST(GroupedVectorAccess, PacksFourAdjacentBf16Accesses) {
  auto compiled = compile("scale_bf16", scale_kernel(bf16));
  const bool cuda = compiled->device().target().language == target::Language::CUDA;
  EXPECT_NE(compiled->source().find(cuda ? "metile_bfloat16x4" : "packed_bfloat4"),
            std::string::npos);
  for (int n : {1024, 1001})
    for (int off : {0, 1, 3}) expect_scaled<Bfloat>(bf16, n, off, 0, true);
}

TEST(GroupedVectorAccess, VectorWidthOneKeepsScalarAccesses) {
  CompileOptions options;
  options.schedule.emplace().vector_width = 1;
  auto compiled = compile("scale_f32", scale_kernel(f32), {}, options);
  EXPECT_EQ(compiled->source().find("float4"), std::string::npos);
  expect_scaled<float>(f32, 1003, 1, 1, false);
}

TEST(GroupedVectorAccess, VectorWidthFourCannotBeForced) {
  CompileOptions options;
  options.schedule.emplace().vector_width = 4;
  try {
    compile("scale_f32", scale_kernel(f32), {}, options);
    FAIL() << "no error";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("vector_width=4 cannot be forced"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace metile
