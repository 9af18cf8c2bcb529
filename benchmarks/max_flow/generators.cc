#include "benchmarks/max_flow/generators.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace metile::flow::bench {

namespace {

struct Rng {
  explicit Rng(uint64_t seed) : engine(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(engine); }
  std::mt19937_64 engine;
};

}  // namespace

Instance genrmf(const std::string& family, int a, int frames, int c1, int c2, uint64_t seed) {
  Rng rng(seed);
  const int per_frame = a * a;
  FlowNetwork::Builder b(per_frame * frames);
  const Capacity in_frame = static_cast<Capacity>(c2) * per_frame;
  auto id = [&](int frame, int x, int y) { return frame * per_frame + x * a + y; };
  std::vector<int> perm(per_frame);
  for (int f = 0; f < frames; ++f) {
    for (int x = 0; x < a; ++x)
      for (int y = 0; y < a; ++y) {
        if (x + 1 < a) b.add_arc(id(f, x, y), id(f, x + 1, y), in_frame);
        if (x > 0) b.add_arc(id(f, x, y), id(f, x - 1, y), in_frame);
        if (y + 1 < a) b.add_arc(id(f, x, y), id(f, x, y + 1), in_frame);
        if (y > 0) b.add_arc(id(f, x, y), id(f, x, y - 1), in_frame);
      }
    if (f + 1 == frames) continue;
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng.engine);
    for (int v = 0; v < per_frame; ++v)
      b.add_arc(f * per_frame + v, (f + 1) * per_frame + perm[v], rng.uniform(c1, c2));
  }
  return Instance{family, std::move(b).build(), 0, per_frame * frames - 1};
}

Instance washington_rlg(int width, int levels, int degree, int max_capacity, uint64_t seed) {
  Rng rng(seed);
  FlowNetwork::Builder b(width * levels + 2);
  const int s = width * levels, t = s + 1;
  const Capacity terminal = static_cast<Capacity>(max_capacity) * degree * 4;
  for (int v = 0; v < width; ++v) b.add_arc(s, v, terminal);
  for (int level = 0; level + 1 < levels; ++level)
    for (int v = 0; v < width; ++v)
      for (int d = 0; d < degree; ++d)
        b.add_arc(level * width + v, (level + 1) * width + rng.uniform(0, width - 1),
                  rng.uniform(1, max_capacity));
  for (int v = 0; v < width; ++v) b.add_arc((levels - 1) * width + v, t, terminal);
  return Instance{"washington-rlg", std::move(b).build(), s, t};
}

Instance ak_style(int k, uint64_t seed) {
  Rng rng(seed);
  const int block_width = 64;
  const int block_levels = std::max(2, k / block_width);
  FlowNetwork::Builder b(2 + k + block_width * block_levels);
  const int s = 0, t = 1, chain = 2, block = 2 + k;
  b.add_arc(s, chain, k);
  for (int i = 0; i < k; ++i) {
    if (i + 1 < k) b.add_arc(chain + i, chain + i + 1, k);
    b.add_arc(chain + i, t, 1);
  }
  for (int v = 0; v < block_width; ++v) b.add_arc(s, block + v, 1000);
  for (int level = 0; level + 1 < block_levels; ++level)
    for (int v = 0; v < block_width; ++v)
      for (int d = 0; d < 2; ++d)
        b.add_arc(block + level * block_width + v,
                  block + (level + 1) * block_width + rng.uniform(0, block_width - 1),
                  rng.uniform(1, 1000));
  for (int v = 0; v < block_width; ++v)
    b.add_arc(block + (block_levels - 1) * block_width + v, t, 1000);
  return Instance{"ak-style", std::move(b).build(), s, t};
}

Instance compiler_sized(int vertices, uint64_t seed) {
  Rng rng(seed);
  FlowNetwork::Builder b(vertices);
  const int s = 0, t = vertices - 1;
  // Ops 1..n-2 in topological order: dataflow arcs forward, legality constraints as infinite
  // arcs backward (a fused consumer drags its producer along), costs on terminal arcs.
  for (int v = 1; v + 1 < vertices; ++v) {
    if (rng.uniform(0, 2) == 0) b.add_arc(s, v, rng.uniform(1, 5000));
    if (rng.uniform(0, 2) == 0) b.add_arc(v, t, rng.uniform(1, 5000));
    const int fanout = rng.uniform(1, 3);
    for (int f = 0; f < fanout && v + 1 < vertices - 1; ++f) {
      const int w = rng.uniform(v + 1, std::min(vertices - 2, v + 4));
      b.add_arc(v, w, rng.uniform(10, 2000));
      if (rng.uniform(0, 3) == 0) b.add_arc(w, v, kInfiniteCapacity);
    }
  }
  b.add_arc(s, 1, rng.uniform(1000, 9000));
  b.add_arc(vertices - 2, t, rng.uniform(1000, 9000));
  return Instance{"compiler-sized", std::move(b).build(), s, t};
}

}  // namespace metile::flow::bench
