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
  const int v5 = 255;
  const int v6 = v4 & v5;
  const int v7 = 2;
  const int v8 = v6 << v7;
  const int v9 = 1;
  const int v10 = v8 + v9;
  const int v12 = v8 + v7;
  const int v13 = 3;
  const int v14 = v8 + v13;
  const int v15 = int(threadgroup_position_in_grid.x);
  const int v16 = 1024;
  const int v17 = v15 * v16;
  const int v18 = v17 + v8;
  const int v19 = v17 + v10;
  const int v20 = v17 + v12;
  const int v21 = v17 + v14;
  const bool v22 = v18 < n;
  const bool v23 = v19 < n;
  const bool v24 = v20 < n;
  const bool v25 = v21 < n;
  device const float* v26 = y + v18;
  device const float* v27 = y + v19;
  device const float* v28 = y + v20;
  device const float* v29 = y + v21;
  const float v30 = 0.0f;
  float v31;
  float v32;
  float v33;
  float v34;
  if (v25) {
    const packed_float4 v55 = ((device const packed_float4*)(v26))[0];
    const float v51 = v55.x;
    const float v52 = v55.y;
    const float v53 = v55.z;
    const float v54 = v55.w;
    v31 = v51;
    v32 = v52;
    v33 = v53;
    v34 = v54;
  } else {
    const float v56 = v22 ? v26[0] : v30;
    const float v57 = v23 ? v27[0] : v30;
    const float v58 = v24 ? v28[0] : v30;
    const float v59 = v25 ? v29[0] : v30;
    v31 = v56;
    v32 = v57;
    v33 = v58;
    v34 = v59;
  }
  device const float* v35 = x + v18;
  device const float* v36 = x + v19;
  device const float* v37 = x + v20;
  device const float* v38 = x + v21;
  float v39;
  float v40;
  float v41;
  float v42;
  if (v25) {
    const packed_float4 v64 = ((device const packed_float4*)(v35))[0];
    const float v60 = v64.x;
    const float v61 = v64.y;
    const float v62 = v64.z;
    const float v63 = v64.w;
    v39 = v60;
    v40 = v61;
    v41 = v62;
    v42 = v63;
  } else {
    const float v65 = v22 ? v35[0] : v30;
    const float v66 = v23 ? v36[0] : v30;
    const float v67 = v24 ? v37[0] : v30;
    const float v68 = v25 ? v38[0] : v30;
    v39 = v65;
    v40 = v66;
    v41 = v67;
    v42 = v68;
  }
  const float v43 = v39 + v31;
  const float v44 = v40 + v32;
  const float v45 = v41 + v33;
  const float v46 = v42 + v34;
  device float* v47 = out + v18;
  device float* v48 = out + v19;
  device float* v49 = out + v20;
  device float* v50 = out + v21;
  if (v25) {
    ((device packed_float4*)(v47))[0] = packed_float4(v43, v44, v45, v46);
  } else {
    if (v22) { v47[0] = v43; }
    if (v23) { v48[0] = v44; }
    if (v24) { v49[0] = v45; }
    if (v25) { v50[0] = v46; }
  }
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
