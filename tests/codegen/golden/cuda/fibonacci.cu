// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ void fibonacci_body(
    int* out,
    int n,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int v2 = 0;
  const int v3 = 1;
  int a = v2;
  int b = v3;
  int steps = v2;
  for (int i = v2; i < n; i += v3) {
    const int next = a + b;
    const int v9 = steps + v3;
    const int metile_next0 = b;
    const int metile_next1 = next;
    const int metile_next2 = v9;
    a = metile_next0;
    b = metile_next1;
    steps = metile_next2;
  }
  const int v10 = a;
  const int v11 = b;
  const int v12 = steps;
  out[0] = v10;
  int* v13 = out + v3;
  v13[0] = v11;
  const int v14 = 2;
  int* v15 = out + v14;
  v15[0] = v12;
}

extern "C" __global__ void fibonacci(
    int* out,
    int n) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  fibonacci_body(out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
