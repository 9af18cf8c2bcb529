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
static __device__ __forceinline__ signed char metile_floordiv(signed char a, signed char b) {
  const signed char q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static __device__ __forceinline__ signed char metile_saturate_i8(float x) {
  if (x != x) return 0;
  if (x <= -128.0f) return -128;
  if (x >= 127.0f) return 127;
  return static_cast<signed char>(static_cast<int>(x));
}
static __device__ __forceinline__ unsigned char metile_saturate_u8(float x) {
  if (x != x) return 0;
  if (x <= 0.0f) return 0;
  if (x >= 255.0f) return 255;
  return static_cast<unsigned char>(static_cast<int>(x));
}
static __device__ __forceinline__ int metile_simd_sum(int v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const int other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void bytes_body(
    const signed char* x,
    const float* f,
    const metile_half* h,
    signed char* out,
    unsigned char* out_u,
    int n,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int tid = int(thread_position_in_threadgroup.x);
  const bool in = tid < n;
  const signed char v8 = -128;
  const signed char* v9 = x + tid;
  const signed char v = in ? v9[0] : v8;
  const signed char v11 = 100;
  const signed char sum = v + v11;
  const signed char v13 = -3;
  const signed char v14 = metile_floordiv(sum, v13);
  const signed char v15 = 1;
  const signed char v16 = v14 >> v15;
  const signed char v17 = abs(v);
  const signed char v18 = min(v16, v17);
  const int v19 = 1;
  const signed char v20 = static_cast<signed char>(__shfl_xor_sync(0xffffffffu, int(v18), int(v19)));
  const signed char v21 = static_cast<signed char>(metile_simd_sum(int(v20)));
  const float* v22 = f + tid;
  const float v23 = v22[0];
  const signed char v24 = metile_saturate_i8(v23);
  const metile_half* v25 = h + tid;
  const metile_half v26 = v25[0];
  const unsigned char v27 = metile_saturate_u8(float(v26));
  const signed char v28 = v21 ^ v24;
  signed char* v29 = out + tid;
  if (in) { v29[0] = v28; }
  const unsigned char v30 = static_cast<unsigned char>(v);
  const unsigned char v31 = 4;
  const unsigned char v32 = v30 << v31;
  const unsigned char v33 = max(v32, v27);
  const unsigned char v34 = 255;
  const unsigned char v35 = v33 - v34;
  unsigned char* v36 = out_u + tid;
  if (in) { v36[0] = v35; }
}

extern "C" __global__ void bytes(
    const signed char* x,
    const float* f,
    const metile_half* h,
    signed char* out,
    unsigned char* out_u,
    int n) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  bytes_body(x, f, h, out, out_u, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
