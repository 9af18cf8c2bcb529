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
static __device__ __forceinline__ unsigned int metile_half_pair(metile_half lo, metile_half hi) {
  return static_cast<unsigned int>(lo.bits) | (static_cast<unsigned int>(hi.bits) << 16);
}
static __device__ __forceinline__ metile_half metile_half_of_bits(unsigned int w) {
  metile_half v;
  v.bits = static_cast<unsigned short>(w);
  return v;
}
struct __align__(8) metile_halfx4 {
  unsigned int w[2];
};
static __device__ __forceinline__ void metile_packed_store(void* p, metile_halfx4 v) {
  asm volatile("st.global.v2.u32 [%0], {%1, %2};" :: "l"(p), "r"(v.w[0]), "r"(v.w[1]) : "memory");
}

static __device__ __forceinline__ void convert_packed_body(
    const float* x,
    metile_half* out,
    int n,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int v3 = 4;
  const int v4 = int(thread_position_in_threadgroup.x);
  const int first = v4 * v3;
  const int v6 = 3;
  const int last = first + v6;
  const bool whole = last < n;
  const float* src = x + first;
  metile_half* dst = out + first;
  const bool v11 = (reinterpret_cast<unsigned long long>(src) & 15) == 0;
  const bool ok = whole && v11;
  if (ok) {
    const float4 v = ((const float4*)(src))[0];
    const float v14 = v.x;
    const metile_half v15 = static_cast<metile_half>(v14);
    const float v16 = v.y;
    const metile_half v17 = static_cast<metile_half>(v16);
    const float v18 = v.z;
    const metile_half v19 = static_cast<metile_half>(v18);
    const float v20 = v.w;
    const metile_half v21 = static_cast<metile_half>(v20);
    metile_packed_store(dst, metile_halfx4{{metile_half_pair(v15, v17), metile_half_pair(v19, v21)}});
  }
}

extern "C" __global__ void convert_packed(
    const float* x,
    metile_half* out,
    int n) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  convert_packed_body(x, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
