#include <metal_stdlib>
using namespace metal;

static inline void rms_norm_f16_body(
    device const half* x,
    device const half* w,
    device half* y,
    int n_cols,
    int row_stride,
    float eps,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int v6 = int(thread_position_in_threadgroup.x);
  const int v7 = int(threadgroup_position_in_grid.x);
  const int v8 = v7 * row_stride;
  device const half* v9 = x + v8;
  device half* v10 = y + v8;
  const float v11 = 0.0f;
  const int v12 = 0;
  const int v13 = 512;
  float v15 = v11;
  float v16 = v11;
  float v17 = v11;
  float v18 = v11;
  for (int i = v12; i < n_cols; i += v13) {
    const int v19 = 128;
    const int v20 = v6 + v19;
    const int v21 = 256;
    const int v22 = v6 + v21;
    const int v23 = 384;
    const int v24 = v6 + v23;
    const int v25 = i + v6;
    const int v26 = i + v20;
    const int v27 = i + v22;
    const int v28 = i + v24;
    const bool v29 = v25 < n_cols;
    const bool v30 = v26 < n_cols;
    const bool v31 = v27 < n_cols;
    const bool v32 = v28 < n_cols;
    device const half* v33 = v9 + v25;
    device const half* v34 = v9 + v26;
    device const half* v35 = v9 + v27;
    device const half* v36 = v9 + v28;
    const half v37 = half(0.0f);
    const half v38 = v29 ? v33[0] : v37;
    const half v39 = v30 ? v34[0] : v37;
    const half v40 = v31 ? v35[0] : v37;
    const half v41 = v32 ? v36[0] : v37;
    const float v42 = static_cast<float>(v38);
    const float v43 = static_cast<float>(v39);
    const float v44 = static_cast<float>(v40);
    const float v45 = static_cast<float>(v41);
    const float v46 = v42 * v42;
    const float v47 = v43 * v43;
    const float v48 = v44 * v44;
    const float v49 = v45 * v45;
    const float v50 = v15 + v46;
    const float v51 = v16 + v47;
    const float v52 = v17 + v48;
    const float v53 = v18 + v49;
    v15 = v50;
    v16 = v51;
    v17 = v52;
    v18 = v53;
  }
  const float v54 = v15;
  const float v55 = v16;
  const float v56 = v17;
  const float v57 = v18;
  const float v58 = static_cast<float>(n_cols);
  const float v60 = v54 + v55;
  const float v61 = v56 + v57;
  const float v62 = v60 + v61;
  const float v63 = simd_sum(v62);
  threadgroup float* v64 = (threadgroup float*)(tg_mem + 0);
  const int v65 = int(simd_lane);
  const int v66 = int(simd_group);
  const bool v68 = v65 == v12;
  threadgroup float* v69 = v64 + v66;
  if (v68) { v69[0] = v63; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float v72 = v64[0];
  const int v73 = 1;
  threadgroup float* v74 = v64 + v73;
  const float v75 = v74[0];
  const int v76 = 2;
  threadgroup float* v77 = v64 + v76;
  const float v78 = v77[0];
  const int v79 = 3;
  threadgroup float* v80 = v64 + v79;
  const float v81 = v80[0];
  const float v82 = v72 + v75;
  const float v83 = v78 + v81;
  const float v84 = v82 + v83;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float v85 = v84 / v58;
  const float v86 = v85 + eps;
  const float v87 = precise::rsqrt(v86);
  for (int i_88 = v12; i_88 < n_cols; i_88 += v13) {
    const int v89 = 128;
    const int v90 = v6 + v89;
    const int v91 = 256;
    const int v92 = v6 + v91;
    const int v93 = 384;
    const int v94 = v6 + v93;
    const int v95 = i_88 + v6;
    const int v96 = i_88 + v90;
    const int v97 = i_88 + v92;
    const int v98 = i_88 + v94;
    const bool v99 = v95 < n_cols;
    const bool v100 = v96 < n_cols;
    const bool v101 = v97 < n_cols;
    const bool v102 = v98 < n_cols;
    device const half* v103 = v9 + v95;
    device const half* v104 = v9 + v96;
    device const half* v105 = v9 + v97;
    device const half* v106 = v9 + v98;
    const half v107 = half(0.0f);
    const half v108 = v99 ? v103[0] : v107;
    const half v109 = v100 ? v104[0] : v107;
    const half v110 = v101 ? v105[0] : v107;
    const half v111 = v102 ? v106[0] : v107;
    const float v112 = static_cast<float>(v108);
    const float v113 = static_cast<float>(v109);
    const float v114 = static_cast<float>(v110);
    const float v115 = static_cast<float>(v111);
    device const half* v116 = w + v95;
    device const half* v117 = w + v96;
    device const half* v118 = w + v97;
    device const half* v119 = w + v98;
    const half v120 = v99 ? v116[0] : v107;
    const half v121 = v100 ? v117[0] : v107;
    const half v122 = v101 ? v118[0] : v107;
    const half v123 = v102 ? v119[0] : v107;
    const float v124 = static_cast<float>(v120);
    const float v125 = static_cast<float>(v121);
    const float v126 = static_cast<float>(v122);
    const float v127 = static_cast<float>(v123);
    const float v128 = v112 * v87;
    const float v129 = v113 * v87;
    const float v130 = v114 * v87;
    const float v131 = v115 * v87;
    const float v132 = v128 * v124;
    const float v133 = v129 * v125;
    const float v134 = v130 * v126;
    const float v135 = v131 * v127;
    const half v136 = static_cast<half>(v132);
    const half v137 = static_cast<half>(v133);
    const half v138 = static_cast<half>(v134);
    const half v139 = static_cast<half>(v135);
    device half* v140 = v10 + v95;
    device half* v141 = v10 + v96;
    device half* v142 = v10 + v97;
    device half* v143 = v10 + v98;
    if (v99) { v140[0] = v136; }
    if (v100) { v141[0] = v137; }
    if (v101) { v142[0] = v138; }
    if (v102) { v143[0] = v139; }
  }
}

kernel void rms_norm_f16(
    device const half* x [[buffer(0)]],
    device const half* w [[buffer(1)]],
    device half* y [[buffer(2)]],
    constant int& n_cols [[buffer(3)]],
    constant int& row_stride [[buffer(4)]],
    constant float& eps [[buffer(5)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  rms_norm_f16_body(x, w, y, n_cols, row_stride, eps, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
