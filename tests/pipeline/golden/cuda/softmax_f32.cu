// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ float metile_simd_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = fmaxf(v, other);
  }
  return v;
}
static __device__ __forceinline__ float metile_simd_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void softmax_f32_body(
    const float* x,
    float* y,
    int n_cols,
    int row_stride,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int v4 = int(thread_position_in_threadgroup.x);
  const int v5 = int(threadgroup_position_in_grid.x);
  const int v6 = v5 * row_stride;
  const float* v7 = x + v6;
  float* v8 = y + v6;
  const float v9 = -9.99999968e+37f;
  const int v10 = 0;
  const int v11 = 512;
  float v13 = v9;
  float v14 = v9;
  float v15 = v9;
  float v16 = v9;
  for (int i = v10; i < n_cols; i += v11) {
    const int v17 = 128;
    const int v18 = v4 + v17;
    const int v19 = 256;
    const int v20 = v4 + v19;
    const int v21 = 384;
    const int v22 = v4 + v21;
    const int v23 = i + v4;
    const int v24 = i + v18;
    const int v25 = i + v20;
    const int v26 = i + v22;
    const bool v27 = v23 < n_cols;
    const bool v28 = v24 < n_cols;
    const bool v29 = v25 < n_cols;
    const bool v30 = v26 < n_cols;
    const float* v31 = v7 + v23;
    const float* v32 = v7 + v24;
    const float* v33 = v7 + v25;
    const float* v34 = v7 + v26;
    const float v35 = 0.0f;
    const float v36 = v27 ? v31[0] : v35;
    const float v37 = v28 ? v32[0] : v35;
    const float v38 = v29 ? v33[0] : v35;
    const float v39 = v30 ? v34[0] : v35;
    const float v40 = v27 ? v36 : v9;
    const float v41 = v28 ? v37 : v9;
    const float v42 = v29 ? v38 : v9;
    const float v43 = v30 ? v39 : v9;
    const float v44 = fmaxf(v13, v40);
    const float v45 = fmaxf(v14, v41);
    const float v46 = fmaxf(v15, v42);
    const float v47 = fmaxf(v16, v43);
    v13 = v44;
    v14 = v45;
    v15 = v46;
    v16 = v47;
  }
  const float v48 = v13;
  const float v49 = v14;
  const float v50 = v15;
  const float v51 = v16;
  const float v53 = fmaxf(v48, v49);
  const float v54 = fmaxf(v50, v51);
  const float v55 = fmaxf(v53, v54);
  const float v56 = metile_simd_max(v55);
  float* v57 = (float*)(tg_mem + 0);
  const int v58 = int(simd_lane);
  const int v59 = int(simd_group);
  const bool v61 = v58 == v10;
  float* v62 = v57 + v59;
  if (v61) { v62[0] = v56; }
  __syncthreads();
  const float v65 = v57[0];
  const int v66 = 1;
  float* v67 = v57 + v66;
  const float v68 = v67[0];
  const int v69 = 2;
  float* v70 = v57 + v69;
  const float v71 = v70[0];
  const int v72 = 3;
  float* v73 = v57 + v72;
  const float v74 = v73[0];
  const float v75 = fmaxf(v65, v68);
  const float v76 = fmaxf(v71, v74);
  const float v77 = fmaxf(v75, v76);
  __syncthreads();
  const float v78 = 0.0f;
  float v80 = v78;
  float v81 = v78;
  float v82 = v78;
  float v83 = v78;
  for (int i_79 = v10; i_79 < n_cols; i_79 += v11) {
    const int v84 = 128;
    const int v85 = v4 + v84;
    const int v86 = 256;
    const int v87 = v4 + v86;
    const int v88 = 384;
    const int v89 = v4 + v88;
    const int v90 = i_79 + v4;
    const int v91 = i_79 + v85;
    const int v92 = i_79 + v87;
    const int v93 = i_79 + v89;
    const bool v94 = v90 < n_cols;
    const bool v95 = v91 < n_cols;
    const bool v96 = v92 < n_cols;
    const bool v97 = v93 < n_cols;
    const float* v98 = v7 + v90;
    const float* v99 = v7 + v91;
    const float* v100 = v7 + v92;
    const float* v101 = v7 + v93;
    const float v102 = v94 ? v98[0] : v78;
    const float v103 = v95 ? v99[0] : v78;
    const float v104 = v96 ? v100[0] : v78;
    const float v105 = v97 ? v101[0] : v78;
    const float v106 = v102 - v77;
    const float v107 = v103 - v77;
    const float v108 = v104 - v77;
    const float v109 = v105 - v77;
    const float v110 = expf(v106);
    const float v111 = expf(v107);
    const float v112 = expf(v108);
    const float v113 = expf(v109);
    const float v114 = v94 ? v110 : v78;
    const float v115 = v95 ? v111 : v78;
    const float v116 = v96 ? v112 : v78;
    const float v117 = v97 ? v113 : v78;
    const float v118 = v80 + v114;
    const float v119 = v81 + v115;
    const float v120 = v82 + v116;
    const float v121 = v83 + v117;
    v80 = v118;
    v81 = v119;
    v82 = v120;
    v83 = v121;
  }
  const float v122 = v80;
  const float v123 = v81;
  const float v124 = v82;
  const float v125 = v83;
  const float v127 = v122 + v123;
  const float v128 = v124 + v125;
  const float v129 = v127 + v128;
  const float v130 = metile_simd_sum(v129);
  if (v61) { v62[0] = v130; }
  __syncthreads();
  const float v139 = v57[0];
  const float v142 = v67[0];
  const float v145 = v70[0];
  const float v148 = v73[0];
  const float v149 = v139 + v142;
  const float v150 = v145 + v148;
  const float v151 = v149 + v150;
  __syncthreads();
  const float v152 = 1.0f;
  const float v153 = v152 / v151;
  for (int i_154 = v10; i_154 < n_cols; i_154 += v11) {
    const int v155 = 128;
    const int v156 = v4 + v155;
    const int v157 = 256;
    const int v158 = v4 + v157;
    const int v159 = 384;
    const int v160 = v4 + v159;
    const int v161 = i_154 + v4;
    const int v162 = i_154 + v156;
    const int v163 = i_154 + v158;
    const int v164 = i_154 + v160;
    const bool v165 = v161 < n_cols;
    const bool v166 = v162 < n_cols;
    const bool v167 = v163 < n_cols;
    const bool v168 = v164 < n_cols;
    const float* v169 = v7 + v161;
    const float* v170 = v7 + v162;
    const float* v171 = v7 + v163;
    const float* v172 = v7 + v164;
    const float v173 = v165 ? v169[0] : v78;
    const float v174 = v166 ? v170[0] : v78;
    const float v175 = v167 ? v171[0] : v78;
    const float v176 = v168 ? v172[0] : v78;
    const float v177 = v173 - v77;
    const float v178 = v174 - v77;
    const float v179 = v175 - v77;
    const float v180 = v176 - v77;
    const float v181 = expf(v177);
    const float v182 = expf(v178);
    const float v183 = expf(v179);
    const float v184 = expf(v180);
    const float v185 = v181 * v153;
    const float v186 = v182 * v153;
    const float v187 = v183 * v153;
    const float v188 = v184 * v153;
    float* v189 = v8 + v161;
    float* v190 = v8 + v162;
    float* v191 = v8 + v163;
    float* v192 = v8 + v164;
    if (v165) { v189[0] = v185; }
    if (v166) { v190[0] = v186; }
    if (v167) { v191[0] = v187; }
    if (v168) { v192[0] = v188; }
  }
}

extern "C" __global__ void softmax_f32(
    const float* x,
    float* y,
    int n_cols,
    int row_stride) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  softmax_f32_body(x, y, n_cols, row_stride, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
