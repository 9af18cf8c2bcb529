// CUDA C++ from meTile: NVRTC built-ins only, no includes.

struct metile_bfloat16 {
  unsigned short bits;
  metile_bfloat16() = default;
  __device__ metile_bfloat16(float f) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const { return __uint_as_float(static_cast<unsigned int>(bits) << 16); }
};
static __device__ __forceinline__ unsigned int metile_bfloat16_pair(metile_bfloat16 lo, metile_bfloat16 hi) {
  return static_cast<unsigned int>(lo.bits) | (static_cast<unsigned int>(hi.bits) << 16);
}
static __device__ __forceinline__ metile_bfloat16 metile_bfloat16_of_bits(unsigned int w) {
  metile_bfloat16 v;
  v.bits = static_cast<unsigned short>(w);
  return v;
}
struct __align__(16) metile_bfloat16x8 {
  unsigned int w[4];
};
static __device__ __forceinline__ float metile_simd_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void row_sum_bf16_body(
    const metile_bfloat16* x,
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
  const metile_bfloat16* v7 = x + v6;
  const float v8 = 0.0f;
  const int v9 = 0;
  const int v10 = 512;
  float v12 = v8;
  float v13 = v8;
  float v14 = v8;
  float v15 = v8;
  float v16 = v8;
  float v17 = v8;
  float v18 = v8;
  float v19 = v8;
  for (int i = v9; i < n_cols; i += v10) {
    const int v20 = 63;
    const int v21 = v4 & v20;
    const int v22 = 3;
    const int v23 = v21 << v22;
    const int v24 = 1;
    const int v25 = v23 + v24;
    const int v26 = 2;
    const int v27 = v23 + v26;
    const int v29 = v23 + v22;
    const int v30 = 4;
    const int v31 = v23 + v30;
    const int v32 = 5;
    const int v33 = v23 + v32;
    const int v34 = 6;
    const int v35 = v23 + v34;
    const int v36 = 7;
    const int v37 = v23 + v36;
    const int v38 = i + v23;
    const int v39 = i + v25;
    const int v40 = i + v27;
    const int v41 = i + v29;
    const int v42 = i + v31;
    const int v43 = i + v33;
    const int v44 = i + v35;
    const int v45 = i + v37;
    const bool v46 = v38 < n_cols;
    const bool v47 = v39 < n_cols;
    const bool v48 = v40 < n_cols;
    const bool v49 = v41 < n_cols;
    const bool v50 = v42 < n_cols;
    const bool v51 = v43 < n_cols;
    const bool v52 = v44 < n_cols;
    const bool v53 = v45 < n_cols;
    const metile_bfloat16* v54 = v7 + v38;
    const metile_bfloat16* v55 = v7 + v39;
    const metile_bfloat16* v56 = v7 + v40;
    const metile_bfloat16* v57 = v7 + v41;
    const metile_bfloat16* v58 = v7 + v42;
    const metile_bfloat16* v59 = v7 + v43;
    const metile_bfloat16* v60 = v7 + v44;
    const metile_bfloat16* v61 = v7 + v45;
    const metile_bfloat16 v62 = metile_bfloat16(0.0f);
    const bool v120 = (reinterpret_cast<unsigned long long>(v54) & 15) == 0;
    const bool v121 = v53 && v120;
    metile_bfloat16x8 v132;
    if (v121) {
      const metile_bfloat16x8 v122 = ((const metile_bfloat16x8*)(v54))[0];
      v132 = v122;
    } else {
      const metile_bfloat16 v123 = v46 ? v54[0] : v62;
      const metile_bfloat16 v124 = v47 ? v55[0] : v62;
      const metile_bfloat16 v125 = v48 ? v56[0] : v62;
      const metile_bfloat16 v126 = v49 ? v57[0] : v62;
      const metile_bfloat16 v127 = v50 ? v58[0] : v62;
      const metile_bfloat16 v128 = v51 ? v59[0] : v62;
      const metile_bfloat16 v129 = v52 ? v60[0] : v62;
      const metile_bfloat16 v130 = v53 ? v61[0] : v62;
      const metile_bfloat16x8 v131 = metile_bfloat16x8{{metile_bfloat16_pair(v123, v124), metile_bfloat16_pair(v125, v126), metile_bfloat16_pair(v127, v128), metile_bfloat16_pair(v129, v130)}};
      v132 = v131;
    }
    const metile_bfloat16 v63 = metile_bfloat16_of_bits(v132.w[0]);
    const metile_bfloat16 v64 = metile_bfloat16_of_bits(v132.w[0] >> 16);
    const metile_bfloat16 v65 = metile_bfloat16_of_bits(v132.w[1]);
    const metile_bfloat16 v66 = metile_bfloat16_of_bits(v132.w[1] >> 16);
    const metile_bfloat16 v67 = metile_bfloat16_of_bits(v132.w[2]);
    const metile_bfloat16 v68 = metile_bfloat16_of_bits(v132.w[2] >> 16);
    const metile_bfloat16 v69 = metile_bfloat16_of_bits(v132.w[3]);
    const metile_bfloat16 v70 = metile_bfloat16_of_bits(v132.w[3] >> 16);
    const float v71 = static_cast<float>(v63);
    const float v72 = static_cast<float>(v64);
    const float v73 = static_cast<float>(v65);
    const float v74 = static_cast<float>(v66);
    const float v75 = static_cast<float>(v67);
    const float v76 = static_cast<float>(v68);
    const float v77 = static_cast<float>(v69);
    const float v78 = static_cast<float>(v70);
    const float v79 = v12 + v71;
    const float v80 = v13 + v72;
    const float v81 = v14 + v73;
    const float v82 = v15 + v74;
    const float v83 = v16 + v75;
    const float v84 = v17 + v76;
    const float v85 = v18 + v77;
    const float v86 = v19 + v78;
    v12 = v79;
    v13 = v80;
    v14 = v81;
    v15 = v82;
    v16 = v83;
    v17 = v84;
    v18 = v85;
    v19 = v86;
  }
  const float v87 = v12;
  const float v88 = v13;
  const float v89 = v14;
  const float v90 = v15;
  const float v91 = v16;
  const float v92 = v17;
  const float v93 = v18;
  const float v94 = v19;
  const float v96 = v87 + v88;
  const float v97 = v89 + v90;
  const float v98 = v91 + v92;
  const float v99 = v93 + v94;
  const float v100 = v96 + v97;
  const float v101 = v98 + v99;
  const float v102 = v100 + v101;
  const float v103 = metile_simd_sum(v102);
  float* v104 = (float*)(tg_mem + 0);
  const int v105 = int(simd_lane);
  const int v106 = int(simd_group);
  const bool v108 = v105 == v9;
  float* v109 = v104 + v106;
  if (v108) { v109[0] = v103; }
  __syncthreads();
  const float v112 = v104[0];
  const int v113 = 1;
  float* v114 = v104 + v113;
  const float v115 = v114[0];
  const float v116 = v112 + v115;
  float* v117 = y + v5;
  const bool v119 = v4 == v9;
  if (v119) { v117[0] = v116; }
}

extern "C" __global__ void row_sum_bf16(
    const metile_bfloat16* x,
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
  row_sum_bf16_body(x, y, n_cols, row_stride, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
