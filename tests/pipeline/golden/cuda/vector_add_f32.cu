// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ void vector_add_f32_body(
    const float* x,
    const float* y,
    float* out,
    int n,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
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
  const float* v22 = y + v14;
  const float* v23 = y + v15;
  const float* v24 = y + v16;
  const float* v25 = y + v17;
  const float v26 = 0.0f;
  const float v27 = v18 ? v22[0] : v26;
  const float v28 = v19 ? v23[0] : v26;
  const float v29 = v20 ? v24[0] : v26;
  const float v30 = v21 ? v25[0] : v26;
  const float* v31 = x + v14;
  const float* v32 = x + v15;
  const float* v33 = x + v16;
  const float* v34 = x + v17;
  const float v35 = v18 ? v31[0] : v26;
  const float v36 = v19 ? v32[0] : v26;
  const float v37 = v20 ? v33[0] : v26;
  const float v38 = v21 ? v34[0] : v26;
  const float v39 = v35 + v27;
  const float v40 = v36 + v28;
  const float v41 = v37 + v29;
  const float v42 = v38 + v30;
  float* v43 = out + v14;
  float* v44 = out + v15;
  float* v45 = out + v16;
  float* v46 = out + v17;
  if (v18) { v43[0] = v39; }
  if (v19) { v44[0] = v40; }
  if (v20) { v45[0] = v41; }
  if (v21) { v46[0] = v42; }
}

extern "C" __global__ void vector_add_f32(
    const float* x,
    const float* y,
    float* out,
    int n) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  vector_add_f32_body(x, y, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
