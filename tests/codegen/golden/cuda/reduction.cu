// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ float metile_simd_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void block_sum_body(
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
  const int lane = int(simd_lane);
  const int v5 = int(simd_group);
  const float v6 = 0.0f;
  const bool v7 = tid < n;
  const float* v8 = x + tid;
  const float v9 = v7 ? v8[0] : v6;
  const float partial = metile_simd_sum(v9);
  float* scratch = (float*)(tg_mem + 0);
  const int v12 = 0;
  const bool v13 = lane == v12;
  float* v14 = scratch + v5;
  if (v13) { v14[0] = partial; }
  __syncthreads();
  const int v15 = 2;
  const bool v16 = lane < v15;
  float* v17 = scratch + lane;
  const float v18 = v16 ? v17[0] : v6;
  const float total = metile_simd_sum(v18);
  const int v20 = 0;
  const bool v21 = tid == v20;
  if (v21) { out[0] = total; }
  __syncwarp();
}

extern "C" __global__ void block_sum(
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
  block_sum_body(x, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
