// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ void if_results_body(
    const float* x,
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
  const bool in_range = tid < n;
  float value;
  int offset;
  if (in_range) {
    const float* v5 = x + tid;
    const float v6 = v5[0];
    const float v7 = 2.0f;
    const float v8 = v6 * v7;
    value = v8;
    offset = tid;
  } else {
    const float v9 = -1.0f;
    const int v10 = 0;
    value = v9;
    offset = v10;
  }
  const float v13 = static_cast<float>(offset);
  const float v14 = value + v13;
  float* v15 = out + tid;
  v15[0] = v14;
}

extern "C" __global__ void if_results(
    const float* x,
    float* out,
    int n) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  if_results_body(x, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
