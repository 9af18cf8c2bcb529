// simd_shuffle_down end to end on the host target: the lanes past the end of the SIMD group
// keep their own value, and a SIMD-group tree sum built from it, against plain C++.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "metile/compile.h"
#include "metile/dsl/dsl.h"
#include "metile/runtime/device.h"

namespace metile {
namespace {

using namespace metile::dsl;

constexpr int kThreads = 64;  // two SIMD groups
constexpr int kWidth = 32;

// out[2t]: x of lane (lane + 3); out[2t + 1]: s after s += shuffle_down(s, d) for d = 16..1.
void shuffle_down_kernel(KernelContext& k) {
  k.set_num_threads(kThreads);
  auto x = k.buffer("x", i32, "read");
  auto out = k.buffer("out", i32, "write");
  auto t = thread_id();
  auto v = load(x + t);
  store(out + t * 2, simd_shuffle_down(v, 3));
  auto s = v;
  for (int delta = kWidth / 2; delta > 0; delta /= 2) s = s + simd_shuffle_down(s, delta);
  store(out + t * 2 + 1, s);
}

// MSL's rule: a lane whose source lane + delta lies past the SIMD group keeps its value.
std::vector<int> shuffled_down(const std::vector<int>& v, int delta) {
  std::vector<int> r(v.size());
  for (size_t t = 0; t < v.size(); ++t) r[t] = t % kWidth + delta < kWidth ? v[t + delta] : v[t];
  return r;
}

TEST(SimdShuffleDown, ReadsTheLaneDeltaAboveAndKeepsTheUpperLanes) {
  std::vector<int> x(kThreads), out(2 * kThreads, 0);
  for (int t = 0; t < kThreads; ++t) x[t] = (t * 37) % 101 - 50;
  auto compiled = compile("shuffle_down", shuffle_down_kernel);
  // The collective itself, in the device's language: no emulation through memory.
  const bool cuda = compiled->device().target().language == target::Language::CUDA;
  EXPECT_NE(compiled->source().find(cuda ? "__shfl_down_sync(" : "simd_shuffle_down("),
            std::string::npos);
  const KernelArg args[] = {BufferView{x.data(), 4 * kThreads, ir::DType::i32},
                            BufferView{out.data(), 8 * kThreads, ir::DType::i32}};
  compiled->launch({1, 1, 1}, args);

  const std::vector<int> by3 = shuffled_down(x, 3);
  std::vector<int> tree = x;
  for (int delta = kWidth / 2; delta > 0; delta /= 2) {
    const std::vector<int> moved = shuffled_down(tree, delta);
    for (size_t t = 0; t < tree.size(); ++t) tree[t] += moved[t];
  }
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(out[2 * t], by3[t]) << "thread " << t;
    EXPECT_EQ(out[2 * t + 1], tree[t]) << "thread " << t;
  }
  // Lane 0 of each group holds the group's sum: the warp-shuffle reduction.
  for (int g = 0; g < kThreads / kWidth; ++g)
    EXPECT_EQ(out[2 * g * kWidth + 1],
              std::accumulate(x.begin() + g * kWidth, x.begin() + (g + 1) * kWidth, 0));
}

}  // namespace
}  // namespace metile
