#include <metal_stdlib>
using namespace metal;

static inline void vector_add_f32_body(
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
  const int v4 = int(thread_position_in_threadgroup.x);
  const int v5 = 256;
  const int v6 = v4 + v5;
  const int v7 = 512;
  const int v8 = v4 + v7;
  const int v9 = 768;
  const int v10 = v4 + v9;
  const int v11 = int(threadgroup_position_in_grid.x);
  const int v12 = 1024;
  const int v13 = v11 * v12;
  const int v14 = v13 + v4;
  const int v15 = v13 + v6;
  const int v16 = v13 + v8;
  const int v17 = v13 + v10;
  const bool v18 = v14 < n;
  const bool v19 = v15 < n;
  const bool v20 = v16 < n;
  const bool v21 = v17 < n;
  device const float* v22 = y + v14;
  device const float* v23 = y + v15;
  device const float* v24 = y + v16;
  device const float* v25 = y + v17;
  const float v26 = 0.0f;
  const float v27 = v18 ? v22[0] : v26;
  const float v28 = v19 ? v23[0] : v26;
  const float v29 = v20 ? v24[0] : v26;
  const float v30 = v21 ? v25[0] : v26;
  device const float* v31 = x + v14;
  device const float* v32 = x + v15;
  device const float* v33 = x + v16;
  device const float* v34 = x + v17;
  const float v35 = v18 ? v31[0] : v26;
  const float v36 = v19 ? v32[0] : v26;
  const float v37 = v20 ? v33[0] : v26;
  const float v38 = v21 ? v34[0] : v26;
  const float v39 = v35 + v27;
  const float v40 = v36 + v28;
  const float v41 = v37 + v29;
  const float v42 = v38 + v30;
  device float* v43 = out + v14;
  device float* v44 = out + v15;
  device float* v45 = out + v16;
  device float* v46 = out + v17;
  if (v18) { v43[0] = v39; }
  if (v19) { v44[0] = v40; }
  if (v20) { v45[0] = v41; }
  if (v21) { v46[0] = v42; }
}

kernel void vector_add_f32(
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
  vector_add_f32_body(x, y, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
