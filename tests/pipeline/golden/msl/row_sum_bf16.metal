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
    const int v16 = 127;
    const int v17 = v4 & v16;
    const int v18 = 2;
    const int v19 = v17 << v18;
    const int v20 = 1;
    const int v21 = v19 + v20;
    const int v23 = v19 + v18;
    const int v24 = 3;
    const int v25 = v19 + v24;
    const int v26 = i + v19;
    const int v27 = i + v21;
    const int v28 = i + v23;
    const int v29 = i + v25;
    const bool v30 = v26 < n_cols;
    const bool v31 = v27 < n_cols;
    const bool v32 = v28 < n_cols;
    const bool v33 = v29 < n_cols;
    device const bfloat* v34 = v7 + v26;
    device const bfloat* v35 = v7 + v27;
    device const bfloat* v36 = v7 + v28;
    device const bfloat* v37 = v7 + v29;
    const bfloat v38 = bfloat(0.0f);
    bfloat v39;
    bfloat v40;
    bfloat v41;
    bfloat v42;
    if (v33) {
      const packed_bfloat4 v88 = ((device const packed_bfloat4*)(v34))[0];
      const bfloat v84 = v88.x;
      const bfloat v85 = v88.y;
      const bfloat v86 = v88.z;
      const bfloat v87 = v88.w;
      v39 = v84;
      v40 = v85;
      v41 = v86;
      v42 = v87;
    } else {
      const bfloat v89 = v30 ? v34[0] : v38;
      const bfloat v90 = v31 ? v35[0] : v38;
      const bfloat v91 = v32 ? v36[0] : v38;
      const bfloat v92 = v33 ? v37[0] : v38;
      v39 = v89;
      v40 = v90;
      v41 = v91;
      v42 = v92;
    }
    const float v43 = static_cast<float>(v39);
    const float v44 = static_cast<float>(v40);
    const float v45 = static_cast<float>(v41);
    const float v46 = static_cast<float>(v42);
    const float v47 = v12 + v43;
    const float v48 = v13 + v44;
    const float v49 = v14 + v45;
    const float v50 = v15 + v46;
    v12 = v47;
    v13 = v48;
    v14 = v49;
    v15 = v50;
  }
  const float v51 = v12;
  const float v52 = v13;
  const float v53 = v14;
  const float v54 = v15;
  const float v56 = v51 + v52;
  const float v57 = v53 + v54;
  const float v58 = v56 + v57;
  const float v59 = simd_sum(v58);
  threadgroup float* v60 = (threadgroup float*)(tg_mem + 0);
  const int v61 = int(simd_lane);
  const int v62 = int(simd_group);
  const bool v64 = v61 == v9;
  threadgroup float* v65 = v60 + v62;
  if (v64) { v65[0] = v59; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float v68 = v60[0];
  const int v69 = 1;
  threadgroup float* v70 = v60 + v69;
  const float v71 = v70[0];
  const int v72 = 2;
  threadgroup float* v73 = v60 + v72;
  const float v74 = v73[0];
  const int v75 = 3;
  threadgroup float* v76 = v60 + v75;
  const float v77 = v76[0];
  const float v78 = v68 + v71;
  const float v79 = v74 + v77;
  const float v80 = v78 + v79;
  device float* v81 = y + v5;
  const bool v83 = v4 == v9;
  if (v83) { v81[0] = v80; }
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
