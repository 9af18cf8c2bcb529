// CUDA C++ from meTile: NVRTC built-ins only, no includes.

struct metile_bfloat16 {
  unsigned short bits;
  metile_bfloat16() = default;
  __device__ metile_bfloat16(float f) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const { return __uint_as_float(static_cast<unsigned int>(bits) << 16); }
};
struct __align__(8) metile_bfloat16x4 {
  metile_bfloat16 x, y, z, w;
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
    const metile_bfloat16* v34 = v7 + v26;
    const metile_bfloat16* v35 = v7 + v27;
    const metile_bfloat16* v36 = v7 + v28;
    const metile_bfloat16* v37 = v7 + v29;
    const metile_bfloat16 v38 = metile_bfloat16(0.0f);
    const bool v82 = v30 && v31;
    const bool v83 = v82 && v32;
    const bool v84 = v83 && v33;
    const long long v85 = static_cast<long long>(v26);
    const long long v86 = static_cast<long long>(v29);
    const long long v87 = 3l;
    const long long v88 = v85 + v87;
    const bool v89 = v86 == v88;
    const bool v90 = v84 && v89;
    const bool v91 = (reinterpret_cast<unsigned long long>(v34) & 7) == 0;
    const bool v92 = v90 && v91;
    metile_bfloat16 v39;
    metile_bfloat16 v40;
    metile_bfloat16 v41;
    metile_bfloat16 v42;
    if (v92) {
      const metile_bfloat16x4 v97 = ((const metile_bfloat16x4*)(v34))[0];
      const metile_bfloat16 v93 = v97.x;
      const metile_bfloat16 v94 = v97.y;
      const metile_bfloat16 v95 = v97.z;
      const metile_bfloat16 v96 = v97.w;
      v39 = v93;
      v40 = v94;
      v41 = v95;
      v42 = v96;
    } else {
      const metile_bfloat16 v98 = v30 ? v34[0] : v38;
      const metile_bfloat16 v99 = v31 ? v35[0] : v38;
      const metile_bfloat16 v100 = v32 ? v36[0] : v38;
      const metile_bfloat16 v101 = v33 ? v37[0] : v38;
      v39 = v98;
      v40 = v99;
      v41 = v100;
      v42 = v101;
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
  const float v59 = metile_simd_sum(v58);
  float* v60 = (float*)(tg_mem + 0);
  const int v61 = int(simd_lane);
  const int v62 = int(simd_group);
  const bool v64 = v61 == v9;
  float* v65 = v60 + v62;
  if (v64) { v65[0] = v59; }
  __syncthreads();
  const float v68 = v60[0];
  const int v69 = 1;
  float* v70 = v60 + v69;
  const float v71 = v70[0];
  const int v72 = 2;
  float* v73 = v60 + v72;
  const float v74 = v73[0];
  const int v75 = 3;
  float* v76 = v60 + v75;
  const float v77 = v76[0];
  const float v78 = v68 + v71;
  const float v79 = v74 + v77;
  const float v80 = v78 + v79;
  float* v81 = y + v5;
  v81[0] = v80;
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
