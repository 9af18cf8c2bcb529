#include <metal_stdlib>
using namespace metal;

static inline void block_sum_body(
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
  const int lane = int(simd_lane);
  const int v5 = int(simd_group);
  const float v6 = 0.0f;
  const bool v7 = tid < n;
  device const float* v8 = x + tid;
  const float v9 = v7 ? v8[0] : v6;
  const float partial = simd_sum(v9);
  threadgroup float* scratch = (threadgroup float*)(tg_mem + 0);
  const int v12 = 0;
  const bool v13 = lane == v12;
  threadgroup float* v14 = scratch + v5;
  if (v13) { v14[0] = partial; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const int v15 = 2;
  const bool v16 = lane < v15;
  threadgroup float* v17 = scratch + lane;
  const float v18 = v16 ? v17[0] : v6;
  const float total = simd_sum(v18);
  const int v20 = 0;
  const bool v21 = tid == v20;
  if (v21) { out[0] = total; }
  simdgroup_barrier(mem_flags::mem_none);
}

kernel void block_sum(
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
  block_sum_body(x, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
