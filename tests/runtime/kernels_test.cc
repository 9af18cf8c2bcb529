// Hand-written emitter-form kernels run on the host emulator against plain C++ references.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>

#include "metile/runtime/host/runtime_table.h"
#include "test_kernels.h"

namespace metile::runtime::testing {
namespace {

using ir::DType;

Buffer filled(DType t, const std::vector<float>& values) {
  Buffer buf = get_device("host").allocate(t, {int64_t(values.size())});
  std::memcpy(buf.data(), values.data(), values.size() * sizeof(float));
  return buf;
}

std::vector<float> random_floats(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST(HostKernels, VectorAddWithMaskedTail) {
  const int n = 1000;  // not a multiple of 256: the last threadgroup is masked
  auto av = random_floats(n, 1), bv = random_floats(n, 2);
  Buffer a = filled(DType::f32, av), b = filled(DType::f32, bv);
  Buffer out = get_device("host").allocate(DType::f32, {n + 24});
  std::fill_n(out.data_as<float>(), n + 24, -7.0f);
  vector_add_kernel().launch({(n + 255) / 256}, {a, b, out, n});
  for (int i = 0; i < n; ++i) ASSERT_EQ(out.data_as<float>()[i], av[i] + bv[i]) << i;
  for (int i = n; i < n + 24; ++i) ASSERT_EQ(out.data_as<float>()[i], -7.0f) << "masked " << i;
}

// The host's exp is glibc's expf written out so that thread loops vectorise it
// (msl/math_functions.h): it must return the bits of the libm call, here for every 509th
// float and the edges of glibc's special cases.
TEST(HostKernels, ExpGivesTheLibmBits) {
  std::vector<uint32_t> bits;
  for (uint64_t u = 0; u < (uint64_t{1} << 32); u += 509) bits.push_back(uint32_t(u));
  for (float edge : {0x1.62e42ep6f, 0x1.62e430p6f, -0x1.9fe368p6f, -0x1.9fe36ap6f, 88.0f, -88.0f,
                     0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f})
    bits.push_back(std::bit_cast<uint32_t>(edge));
  bits.push_back(0x7fa00000u);  // a signalling NaN
  const int n = int(bits.size());
  Buffer x = get_device("host").allocate(DType::f32, {n});
  Buffer out = get_device("host").allocate(DType::f32, {n});
  std::memcpy(x.data(), bits.data(), bits.size() * sizeof(uint32_t));
  exp_kernel().launch({uint32_t(n + 255) / 256}, {x, out, n});
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    const float expected = std::exp(std::bit_cast<float>(bits[i]));
    const uint32_t got = reinterpret_cast<const uint32_t*>(out.data())[i];
    if (got != std::bit_cast<uint32_t>(expected) && ++wrong <= 5)
      ADD_FAILURE() << "exp(" << std::hexfloat << std::bit_cast<float>(bits[i]) << ") gave "
                    << std::bit_cast<float>(got) << ", libm " << expected;
  }
  EXPECT_EQ(wrong, 0);
}

TEST(HostKernels, RowReduceWithThreadgroupMemoryAndSimdCollectives) {
  const int rows = 37, cols = 1000;
  auto xv = random_floats(size_t(rows) * cols, 3);
  Buffer x = filled(DType::f32, xv);
  Buffer sums = get_device("host").allocate(DType::f32, {rows});
  Buffer maxes = get_device("host").allocate(DType::f32, {rows});
  row_reduce_kernel().launch({rows}, {x, sums, maxes, cols});
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    float m = -INFINITY;
    for (int c = 0; c < cols; ++c) {
      s += xv[r * cols + c];
      m = std::max(m, xv[r * cols + c]);
    }
    EXPECT_NEAR(sums.data_as<float>()[r], s, 1e-3) << r;
    EXPECT_EQ(maxes.data_as<float>()[r], m) << r;
  }
}

TEST(HostKernels, RowReduceIsDeterministic) {
  const int rows = 64, cols = 777;
  Buffer x = filled(DType::f32, random_floats(size_t(rows) * cols, 4));
  Buffer s1 = get_device("host").allocate(DType::f32, {rows});
  Buffer s2 = get_device("host").allocate(DType::f32, {rows});
  Buffer m = get_device("host").allocate(DType::f32, {rows});
  row_reduce_kernel().launch({rows}, {x, s1, m, cols});
  row_reduce_kernel().launch({rows}, {x, s2, m, cols});
  EXPECT_EQ(std::memcmp(s1.data(), s2.data(), rows * sizeof(float)), 0);
}

TEST(HostKernels, SimdPermutationsAndScans) {
  const int n = 64;
  std::vector<int> xv(n);
  for (int i = 0; i < n; ++i) xv[i] = (i * 37 + 11) % 101;
  Buffer x = get_device("host").allocate(DType::i32, {n});
  std::memcpy(x.data(), xv.data(), sizeof(int) * n);
  Buffer out = get_device("host").allocate(DType::i32, {n * 8});
  simd_ops_kernel().launch({1}, {x, out});
  const int* o = out.data_as<int>();
  for (int t = 0; t < n; ++t) {
    const int lane = t % 32, base = t - lane;
    auto at = [&](int l) { return xv[base + l]; };
    EXPECT_EQ(o[t * 8 + 0], at(lane ^ 5)) << t;
    EXPECT_EQ(o[t * 8 + 1], lane < 3 ? at(lane) : at(lane - 3)) << t;
    EXPECT_EQ(o[t * 8 + 2], lane + 3 >= 32 ? at(lane) : at(lane + 3)) << t;
    EXPECT_EQ(o[t * 8 + 3], at(7)) << t;
    EXPECT_EQ(o[t * 8 + 4], at(31 - lane)) << t;
    int prefix = 0, ballot = 0, lowest = at(0);
    for (int l = 0; l < 32; ++l) {
      if (l < lane) prefix += at(l);
      if (at(l) & 1) ballot |= 1 << l;
      lowest = std::min(lowest, at(l));
    }
    EXPECT_EQ(o[t * 8 + 5], prefix) << t;
    EXPECT_EQ(o[t * 8 + 6], ballot) << t;
    const int p = at(lane ^ 1);
    EXPECT_EQ(o[t * 8 + 7], p + (p + 1) + 2 * p - p + lowest * 1000) << t;
  }
}

// IEEE binary16 through the compiler's own _Float16, an independent reference.
uint16_t reference_half(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
float half_value(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}
uint16_t reference_bfloat(float f) {  // nearest even, by comparing the two neighbours
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t lo = x & 0xffff0000u, hi = lo + 0x10000u;
  float flo, fhi;
  std::memcpy(&flo, &lo, 4);
  std::memcpy(&fhi, &hi, 4);
  const double dlo = std::fabs(double(f) - flo), dhi = std::fabs(double(fhi) - f);
  if (dlo < dhi || (dlo == dhi && ((lo >> 16) & 1) == 0)) return uint16_t(lo >> 16);
  return uint16_t(hi >> 16);
}
float bfloat_value(uint16_t bits) {
  const uint32_t x = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

TEST(HostKernels, HalfAndBfloatBuffersAndScalars) {
  const int n = 128;
  auto values = random_floats(n, 5);
  std::vector<uint16_t> hv(n), bv(n);
  for (int i = 0; i < n; ++i) {
    hv[i] = reference_half(values[i]);
    bv[i] = reference_bfloat(values[i] * 3.0f);
  }
  Buffer h = get_device("host").allocate(DType::f16, {n});
  Buffer b = get_device("host").allocate(DType::bf16, {n});
  std::memcpy(h.data(), hv.data(), 2 * n);
  std::memcpy(b.data(), bv.data(), 2 * n);
  Buffer out_h = get_device("host").allocate(DType::f16, {n});
  Buffer out_b = get_device("host").allocate(DType::bf16, {n});
  Buffer out_f = get_device("host").allocate(DType::f32, {n});
  half_bfloat_kernel().launch({n / 64}, {h, b, out_h, out_b, out_f, 1.5f});
  for (int i = 0; i < n; ++i) {
    const float x = half_value(hv[i]), y = bfloat_value(bv[i]);
    const float prod = half_value(reference_half(x * 1.5f));
    EXPECT_EQ(out_h.data_as<uint16_t>()[i], reference_half(prod + 1.0f)) << i;
    const float y2 = bfloat_value(reference_bfloat(y * 2.0f));
    EXPECT_EQ(out_b.data_as<uint16_t>()[i], reference_bfloat(y2 + y)) << i;
    float group_sum = half_value(hv[i / 32 * 32]);
    for (int l = 1; l < 32; ++l)
      group_sum = half_value(reference_half(group_sum + half_value(hv[i / 32 * 32 + l])));
    const float expected = half_value(reference_half(std::exp(x))) + prod + group_sum;
    EXPECT_FLOAT_EQ(out_f.data_as<float>()[i], expected) << i;
  }
}

// i8 and u8 travel as 1-byte buffer elements and scalars; char is signed on every host.
TEST(HostKernels, EightBitBuffersAndScalars) {
  const int n = 64;
  Buffer x = get_device("host").allocate(DType::i8, {n});
  for (int i = 0; i < n; ++i) x.data_as<int8_t>()[i] = static_cast<int8_t>(i * 4 - 128);
  Buffer out = get_device("host").allocate(DType::i8, {n});
  Buffer out_u = get_device("host").allocate(DType::u8, {n});
  bytes_kernel().launch({1}, {x, out, out_u, int32_t{100}, uint32_t{0xF0}});
  for (int i = 0; i < n; ++i) {
    const int v = i * 4 - 128;
    EXPECT_EQ(out.data_as<int8_t>()[i], static_cast<int8_t>(v + 100)) << i;
    EXPECT_EQ(out_u.data_as<uint8_t>()[i], static_cast<uint8_t>(v) ^ 0xF0) << i;
  }
  EXPECT_THROW(bytes_kernel().launch({1}, {x, out, out_u, int32_t{128}, uint32_t{0}}), UserError);
  EXPECT_THROW(bytes_kernel().launch({1}, {x, out, out_u, int32_t{0}, uint32_t{256}}), UserError);
}

TEST(HostKernels, TwoDimensionalThreadgroupCoordinates) {
  Buffer out = get_device("host").allocate(DType::u32, {2 * 3 * 32 * 4});
  coordinates_kernel().launch(Grid{2, 3, 1}, {out});
  const uint32_t* o = out.data_as<uint32_t>();
  for (uint32_t gy = 0; gy < 3; ++gy)
    for (uint32_t gx = 0; gx < 2; ++gx)
      for (uint32_t t = 0; t < 32; ++t) {
        const uint32_t* r = o + ((gx + 2 * gy) * 32 + t) * 4;
        EXPECT_EQ(r[0], t % 8);
        EXPECT_EQ(r[1], t / 8);
        EXPECT_EQ(r[2], t % 32);
        EXPECT_EQ(r[3], 100 * gy);
      }
}

// d = a * b[:, 8:16] + transpose(c); the result must not depend on the lane mapping.
TEST(HostKernels, SimdgroupMatrixIndependentOfLaneMapping) {
  auto av = random_floats(64, 6), bv = random_floats(128, 7), cv = random_floats(64, 8);
  Buffer a = filled(DType::f32, av), b = filled(DType::f32, bv), c = filled(DType::f32, cv);
  std::vector<float> expected(64);
  for (int r = 0; r < 8; ++r)
    for (int col = 0; col < 8; ++col) {
      float s = cv[col * 8 + r];
      for (int k = 0; k < 8; ++k) s += av[r * 8 + k] * bv[k * 16 + 8 + col];
      expected[r * 8 + col] = s;
    }
  std::array<unsigned char, 32> identity, shuffled;
  std::iota(identity.begin(), identity.end(), 0);
  shuffled = identity;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(9));

  std::vector<std::vector<float>> lane_elements;
  for (const auto& map : {identity, shuffled}) {
    host::set_simdgroup_matrix_lane_map(map);
    Buffer d = get_device("host").allocate(DType::f32, {64});
    Buffer lanes = get_device("host").allocate(DType::f32, {64});
    simdgroup_matmul_kernel().launch({1}, {a, b, c, d, lanes});
    for (int i = 0; i < 64; ++i) EXPECT_NEAR(d.data_as<float>()[i], expected[i], 1e-4) << i;
    lane_elements.emplace_back(lanes.data_as<float>(), lanes.data_as<float>() + 64);
  }
  host::set_simdgroup_matrix_lane_map(identity);
  // Apple's mapping: lane 0 holds row 0, columns 0-1; lane 2 holds row 1, columns 0-1.
  EXPECT_EQ(lane_elements[0][0], av[0]);
  EXPECT_EQ(lane_elements[0][1], av[1]);
  EXPECT_EQ(lane_elements[0][4], av[8]);
  EXPECT_NE(lane_elements[0], lane_elements[1]);  // the permutation did change the mapping
}

TEST(HostKernels, MillionElementVectorAddTiming) {
  const int n = 1 << 20;
  std::vector<float> av(n), bv(n);
  for (int i = 0; i < n; ++i) {
    av[i] = float(i);
    bv[i] = 0.5f;
  }
  Buffer a = filled(DType::f32, av), b = filled(DType::f32, bv);
  Buffer out = get_device("host").allocate(DType::f32, {n});
  vector_add_kernel().launch({n / 256}, {a, b, out, n});  // warm-up: stacks, pool
  const auto start = std::chrono::steady_clock::now();
  vector_add_kernel().launch({n / 256}, {a, b, out, n});
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("1M-element vector_add, 256 threads/threadgroup, 4096 threadgroups: %.1f ms\n", ms);
  for (int i = 0; i < n; i += 4097) ASSERT_EQ(out.data_as<float>()[i], float(i) + 0.5f);
  EXPECT_LT(ms, 2000.0);
}

}  // namespace
}  // namespace metile::runtime::testing
