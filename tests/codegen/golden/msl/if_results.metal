#include <metal_stdlib>
using namespace metal;

static inline void if_results_body(
    device const float* x,
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
  const bool in_range = tid < n;
  float value;
  int offset;
  if (in_range) {
    device const float* v5 = x + tid;
    const float v6 = v5[0];
    const float v7 = 2.0f;
    const float v8 = v6 * v7;
    value = v8;
    offset = tid;
  } else {
    const float v9 = -1.0f;
    const int v10 = 0;
    value = v9;
    offset = v10;
  }
  const float v13 = static_cast<float>(offset);
  const float v14 = value + v13;
  device float* v15 = out + tid;
  v15[0] = v14;
}

kernel void if_results(
    device const float* x [[buffer(0)]],
    device float* out [[buffer(1)]],
    constant int& n [[buffer(2)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  if_results_body(x, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
