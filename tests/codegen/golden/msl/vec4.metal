#include <metal_stdlib>
using namespace metal;

static inline void vec4_square_body(
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
  const int v4 = 4;
  const int offset = tid * v4;
  device const float* v6 = x + offset;
  const float4 v = ((device const float4*)(v6))[0];
  const float4 sq = v * v;
  const bool4 v9 = sq > v;
  const float4 v10 = select(v, sq, v9);
  const float4 v11 = fast::exp(v10);
  device float* v12 = out + offset;
  const bool v13 = offset < n;
  if (v13) { ((device float4*)(v12))[0] = v11; }
}

kernel void vec4_square(
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
  vec4_square_body(x, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
