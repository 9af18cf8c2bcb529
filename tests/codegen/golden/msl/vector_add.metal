#include <metal_stdlib>
using namespace metal;

static inline void vector_add_body(
    device const float* x,
    device const float* y,
    device float* out,
    int n,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int tid = int(thread_position_in_threadgroup.x);
  const int v5 = int(threadgroup_position_in_grid.x);
  const int v6 = 256;
  const int v7 = v5 * v6;
  const int idx = v7 + tid;
  const bool mask = idx < n;
  const float v10 = 0.0f;
  device const float* v11 = x + idx;
  const float v12 = mask ? v11[0] : v10;
  device const float* v13 = y + idx;
  const float v14 = mask ? v13[0] : v10;
  const float sum = v12 + v14;
  device float* v16 = out + idx;
  if (mask) { v16[0] = sum; }
}

kernel void vector_add(
    device const float* x [[buffer(0)]],
    device const float* y [[buffer(1)]],
    device float* out [[buffer(2)]],
    constant int& n [[buffer(3)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  vector_add_body(x, y, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
