// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ void vector_add_body(
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
  const int tid = int(thread_position_in_threadgroup.x);
  const int v5 = int(threadgroup_position_in_grid.x);
  const int v6 = 256;
  const int v7 = v5 * v6;
  const int idx = v7 + tid;
  const bool mask = idx < n;
  const float v10 = 0.0f;
  const float* v11 = x + idx;
  const float v12 = mask ? v11[0] : v10;
  const float* v13 = y + idx;
  const float v14 = mask ? v13[0] : v10;
  const float sum = v12 + v14;
  float* v16 = out + idx;
  if (mask) { v16[0] = sum; }
}

extern "C" __global__ void vector_add(
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
  vector_add_body(x, y, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
