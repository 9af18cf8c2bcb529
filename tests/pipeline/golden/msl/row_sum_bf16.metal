#include <metal_stdlib>
using namespace metal;

static inline void row_sum_bf16_body(
    device const bfloat* x,
    device float* y,
    int n_cols,
    int row_stride,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int v4 = int(thread_position_in_threadgroup.x);
  const int v5 = int(threadgroup_position_in_grid.x);
  const int v6 = v5 * row_stride;
  device const bfloat* v7 = x + v6;
  const float v8 = 0.0f;
  const int v9 = 0;
  const int v10 = 512;
  float v12 = v8;
  float v13 = v8;
  float v14 = v8;
  float v15 = v8;
  for (int i = v9; i < n_cols; i += v10) {
    const int v16 = 128;
    const int v17 = v4 + v16;
    const int v18 = 256;
    const int v19 = v4 + v18;
    const int v20 = 384;
    const int v21 = v4 + v20;
    const int v22 = i + v4;
    const int v23 = i + v17;
    const int v24 = i + v19;
    const int v25 = i + v21;
    const bool v26 = v22 < n_cols;
    const bool v27 = v23 < n_cols;
    const bool v28 = v24 < n_cols;
    const bool v29 = v25 < n_cols;
    device const bfloat* v30 = v7 + v22;
    device const bfloat* v31 = v7 + v23;
    device const bfloat* v32 = v7 + v24;
    device const bfloat* v33 = v7 + v25;
    const bfloat v34 = bfloat(0.0f);
    const bfloat v35 = v26 ? v30[0] : v34;
    const bfloat v36 = v27 ? v31[0] : v34;
    const bfloat v37 = v28 ? v32[0] : v34;
    const bfloat v38 = v29 ? v33[0] : v34;
    const float v39 = static_cast<float>(v35);
    const float v40 = static_cast<float>(v36);
    const float v41 = static_cast<float>(v37);
    const float v42 = static_cast<float>(v38);
    const float v43 = v12 + v39;
    const float v44 = v13 + v40;
    const float v45 = v14 + v41;
    const float v46 = v15 + v42;
    v12 = v43;
    v13 = v44;
    v14 = v45;
    v15 = v46;
  }
  const float v47 = v12;
  const float v48 = v13;
  const float v49 = v14;
  const float v50 = v15;
  const float v52 = v47 + v48;
  const float v53 = v49 + v50;
  const float v54 = v52 + v53;
  const float v55 = simd_sum(v54);
  threadgroup float* v56 = (threadgroup float*)(tg_mem + 0);
  const int v57 = int(simd_lane);
  const int v58 = int(simd_group);
  const bool v60 = v57 == v9;
  threadgroup float* v61 = v56 + v58;
  if (v60) { v61[0] = v55; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float v64 = v56[0];
  const int v65 = 1;
  threadgroup float* v66 = v56 + v65;
  const float v67 = v66[0];
  const int v68 = 2;
  threadgroup float* v69 = v56 + v68;
  const float v70 = v69[0];
  const int v71 = 3;
  threadgroup float* v72 = v56 + v71;
  const float v73 = v72[0];
  const float v74 = v64 + v67;
  const float v75 = v70 + v73;
  const float v76 = v74 + v75;
  device float* v77 = y + v5;
  v77[0] = v76;
}

kernel void row_sum_bf16(
    device const bfloat* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    constant int& n_cols [[buffer(2)]],
    constant int& row_stride [[buffer(3)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  row_sum_bf16_body(x, y, n_cols, row_stride, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
