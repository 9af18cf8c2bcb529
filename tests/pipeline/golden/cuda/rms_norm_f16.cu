// CUDA C++ from meTile: NVRTC built-ins only, no includes.

struct metile_half {
  unsigned short bits;
  metile_half() = default;
  __device__ metile_half(float f) { asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(bits));
    return f;
  }
};
static __device__ __forceinline__ float metile_simd_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void rms_norm_f16_body(
    const metile_half* x,
    const metile_half* w,
    metile_half* y,
    int n_cols,
    int row_stride,
    float eps,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int v6 = int(thread_position_in_threadgroup.x);
  const int v7 = int(threadgroup_position_in_grid.x);
  const int v8 = v7 * row_stride;
  const metile_half* v9 = x + v8;
  metile_half* v10 = y + v8;
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
    const metile_half* v33 = v9 + v25;
    const metile_half* v34 = v9 + v26;
    const metile_half* v35 = v9 + v27;
    const metile_half* v36 = v9 + v28;
    const metile_half v37 = metile_half(0.0f);
    const metile_half v38 = v29 ? v33[0] : v37;
    const metile_half v39 = v30 ? v34[0] : v37;
    const metile_half v40 = v31 ? v35[0] : v37;
    const metile_half v41 = v32 ? v36[0] : v37;
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
  const float v63 = metile_simd_sum(v62);
  float* v64 = (float*)(tg_mem + 0);
  const int v65 = int(simd_lane);
  const int v66 = int(simd_group);
  const bool v68 = v65 == v12;
  float* v69 = v64 + v66;
  if (v68) { v69[0] = v63; }
  __syncthreads();
  const float v72 = v64[0];
  const int v73 = 1;
  float* v74 = v64 + v73;
  const float v75 = v74[0];
  const int v76 = 2;
  float* v77 = v64 + v76;
  const float v78 = v77[0];
  const int v79 = 3;
  float* v80 = v64 + v79;
  const float v81 = v80[0];
  const float v82 = v72 + v75;
  const float v83 = v78 + v81;
  const float v84 = v82 + v83;
  __syncthreads();
  const float v85 = v84 / v58;
  const float v86 = v85 + eps;
  const float v87 = rsqrtf(v86);
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
    const metile_half* v103 = v9 + v95;
    const metile_half* v104 = v9 + v96;
    const metile_half* v105 = v9 + v97;
    const metile_half* v106 = v9 + v98;
    const metile_half v107 = metile_half(0.0f);
    const metile_half v108 = v99 ? v103[0] : v107;
    const metile_half v109 = v100 ? v104[0] : v107;
    const metile_half v110 = v101 ? v105[0] : v107;
    const metile_half v111 = v102 ? v106[0] : v107;
    const float v112 = static_cast<float>(v108);
    const float v113 = static_cast<float>(v109);
    const float v114 = static_cast<float>(v110);
    const float v115 = static_cast<float>(v111);
    const metile_half* v116 = w + v95;
    const metile_half* v117 = w + v96;
    const metile_half* v118 = w + v97;
    const metile_half* v119 = w + v98;
    const metile_half v120 = v99 ? v116[0] : v107;
    const metile_half v121 = v100 ? v117[0] : v107;
    const metile_half v122 = v101 ? v118[0] : v107;
    const metile_half v123 = v102 ? v119[0] : v107;
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
    const metile_half v136 = static_cast<metile_half>(v132);
    const metile_half v137 = static_cast<metile_half>(v133);
    const metile_half v138 = static_cast<metile_half>(v134);
    const metile_half v139 = static_cast<metile_half>(v135);
    metile_half* v140 = v10 + v95;
    metile_half* v141 = v10 + v96;
    metile_half* v142 = v10 + v97;
    metile_half* v143 = v10 + v98;
    if (v99) { v140[0] = v136; }
    if (v100) { v141[0] = v137; }
    if (v101) { v142[0] = v138; }
    if (v102) { v143[0] = v139; }
  }
}

extern "C" __global__ void rms_norm_f16(
    const metile_half* x,
    const metile_half* w,
    metile_half* y,
    int n_cols,
    int row_stride,
    float eps) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  rms_norm_f16_body(x, w, y, n_cols, row_stride, eps, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
