#include <metal_stdlib>
using namespace metal;

static inline void fibonacci_body(
    device int* out,
    int n,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int v2 = 0;
  const int v3 = 1;
  int a = v2;
  int b = v3;
  int steps = v2;
  for (int i = v2; i < n; i += v3) {
    const int next = a + b;
    const int v9 = steps + v3;
    const int metile_next0 = b;
    const int metile_next1 = next;
    const int metile_next2 = v9;
    a = metile_next0;
    b = metile_next1;
    steps = metile_next2;
  }
  const int v10 = a;
  const int v11 = b;
  const int v12 = steps;
  out[0] = v10;
  device int* v13 = out + v3;
  v13[0] = v11;
  const int v14 = 2;
  device int* v15 = out + v14;
  v15[0] = v12;
}

kernel void fibonacci(
    device int* out [[buffer(0)]],
    constant int& n [[buffer(1)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  fibonacci_body(out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
