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
    const int v19 = 127;
    const int v20 = v6 & v19;
    const int v21 = 2;
    const int v22 = v20 << v21;
    const int v23 = 1;
    const int v24 = v22 + v23;
    const int v26 = v22 + v21;
    const int v27 = 3;
    const int v28 = v22 + v27;
    const int v29 = i + v22;
    const int v30 = i + v24;
    const int v31 = i + v26;
    const int v32 = i + v28;
    const bool v33 = v29 < n_cols;
    const bool v34 = v30 < n_cols;
    const bool v35 = v31 < n_cols;
    const bool v36 = v32 < n_cols;
    device const half* v37 = v9 + v29;
    device const half* v38 = v9 + v30;
    device const half* v39 = v9 + v31;
    device const half* v40 = v9 + v32;
    const half v41 = half(0.0f);
    half v42;
    half v43;
    half v44;
    half v45;
    if (v36) {
      const packed_half4 v156 = ((device const packed_half4*)(v37))[0];
      const half v152 = v156.x;
      const half v153 = v156.y;
      const half v154 = v156.z;
      const half v155 = v156.w;
      v42 = v152;
      v43 = v153;
      v44 = v154;
      v45 = v155;
    } else {
      const half v157 = v33 ? v37[0] : v41;
      const half v158 = v34 ? v38[0] : v41;
      const half v159 = v35 ? v39[0] : v41;
      const half v160 = v36 ? v40[0] : v41;
      v42 = v157;
      v43 = v158;
      v44 = v159;
      v45 = v160;
    }
    const float v46 = static_cast<float>(v42);
    const float v47 = static_cast<float>(v43);
    const float v48 = static_cast<float>(v44);
    const float v49 = static_cast<float>(v45);
    const float v50 = v46 * v46;
    const float v51 = v47 * v47;
    const float v52 = v48 * v48;
    const float v53 = v49 * v49;
    const float v54 = v15 + v50;
    const float v55 = v16 + v51;
    const float v56 = v17 + v52;
    const float v57 = v18 + v53;
    v15 = v54;
    v16 = v55;
    v17 = v56;
    v18 = v57;
  }
  const float v58 = v15;
  const float v59 = v16;
  const float v60 = v17;
  const float v61 = v18;
  const float v62 = static_cast<float>(n_cols);
  const float v64 = v58 + v59;
  const float v65 = v60 + v61;
  const float v66 = v64 + v65;
  const float v67 = simd_sum(v66);
  threadgroup float* v68 = (threadgroup float*)(tg_mem + 0);
  const int v69 = int(simd_lane);
  const int v70 = int(simd_group);
  const bool v72 = v69 == v12;
  threadgroup float* v73 = v68 + v70;
  if (v72) { v73[0] = v67; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float v76 = v68[0];
  const int v77 = 1;
  threadgroup float* v78 = v68 + v77;
  const float v79 = v78[0];
  const int v80 = 2;
  threadgroup float* v81 = v68 + v80;
  const float v82 = v81[0];
  const int v83 = 3;
  threadgroup float* v84 = v68 + v83;
  const float v85 = v84[0];
  const float v86 = v76 + v79;
  const float v87 = v82 + v85;
  const float v88 = v86 + v87;
  const float v89 = v88 / v62;
  const float v90 = v89 + eps;
  const float v91 = precise::rsqrt(v90);
  for (int i_92 = v12; i_92 < n_cols; i_92 += v13) {
    const int v93 = 127;
    const int v94 = v6 & v93;
    const int v96 = v94 << v80;
    const int v98 = v96 + v77;
    const int v100 = v96 + v80;
    const int v102 = v96 + v83;
    const int v103 = i_92 + v96;
    const int v104 = i_92 + v98;
    const int v105 = i_92 + v100;
    const int v106 = i_92 + v102;
    const bool v107 = v103 < n_cols;
    const bool v108 = v104 < n_cols;
    const bool v109 = v105 < n_cols;
    const bool v110 = v106 < n_cols;
    device const half* v111 = v9 + v103;
    device const half* v112 = v9 + v104;
    device const half* v113 = v9 + v105;
    device const half* v114 = v9 + v106;
    const half v115 = half(0.0f);
    half v116;
    half v117;
    half v118;
    half v119;
    if (v110) {
      const packed_half4 v165 = ((device const packed_half4*)(v111))[0];
      const half v161 = v165.x;
      const half v162 = v165.y;
      const half v163 = v165.z;
      const half v164 = v165.w;
      v116 = v161;
      v117 = v162;
      v118 = v163;
      v119 = v164;
    } else {
      const half v166 = v107 ? v111[0] : v115;
      const half v167 = v108 ? v112[0] : v115;
      const half v168 = v109 ? v113[0] : v115;
      const half v169 = v110 ? v114[0] : v115;
      v116 = v166;
      v117 = v167;
      v118 = v168;
      v119 = v169;
    }
    const float v120 = static_cast<float>(v116);
    const float v121 = static_cast<float>(v117);
    const float v122 = static_cast<float>(v118);
    const float v123 = static_cast<float>(v119);
    device const half* v124 = w + v103;
    device const half* v125 = w + v104;
    device const half* v126 = w + v105;
    device const half* v127 = w + v106;
    half v128;
    half v129;
    half v130;
    half v131;
    if (v110) {
      const packed_half4 v174 = ((device const packed_half4*)(v124))[0];
      const half v170 = v174.x;
      const half v171 = v174.y;
      const half v172 = v174.z;
      const half v173 = v174.w;
      v128 = v170;
      v129 = v171;
      v130 = v172;
      v131 = v173;
    } else {
      const half v175 = v107 ? v124[0] : v115;
      const half v176 = v108 ? v125[0] : v115;
      const half v177 = v109 ? v126[0] : v115;
      const half v178 = v110 ? v127[0] : v115;
      v128 = v175;
      v129 = v176;
      v130 = v177;
      v131 = v178;
    }
    const float v132 = static_cast<float>(v128);
    const float v133 = static_cast<float>(v129);
    const float v134 = static_cast<float>(v130);
    const float v135 = static_cast<float>(v131);
    const float v136 = v120 * v91;
    const float v137 = v121 * v91;
    const float v138 = v122 * v91;
    const float v139 = v123 * v91;
    const float v140 = v136 * v132;
    const float v141 = v137 * v133;
    const float v142 = v138 * v134;
    const float v143 = v139 * v135;
    const half v144 = static_cast<half>(v140);
    const half v145 = static_cast<half>(v141);
    const half v146 = static_cast<half>(v142);
    const half v147 = static_cast<half>(v143);
    device half* v148 = v10 + v103;
    device half* v149 = v10 + v104;
    device half* v150 = v10 + v105;
    device half* v151 = v10 + v106;
    if (v110) {
      ((device packed_half4*)(v148))[0] = packed_half4(v144, v145, v146, v147);
    } else {
      if (v107) { v148[0] = v144; }
      if (v108) { v149[0] = v145; }
      if (v109) { v150[0] = v146; }
      if (v110) { v151[0] = v147; }
    }
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
