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
static __device__ __forceinline__ float metile_from_f8e5m2(unsigned char b) {
  const unsigned int sign = static_cast<unsigned int>(b & 0x80u) << 24;
  const unsigned int e = (static_cast<unsigned int>(b) >> 2) & 31u;
  const unsigned int m = static_cast<unsigned int>(b) & 3u;
  if (e == 31u) return __uint_as_float(sign | (m == 0u ? 0x7F800000u : 0x7FC00000u));
  if (e == 0u) {
    const float v = static_cast<float>(m) * 1.52587891e-05f;
    return sign != 0u ? -v : v;
  }
  return __uint_as_float(sign | ((e + 112u) << 23) | (m << 21));
}
static __device__ __forceinline__ short metile_saturate_i16(float x) {
  if (x != x) return 0;
  if (x <= -32768.0f) return -32768;
  if (x >= 32767.0f) return 32767;
  return static_cast<short>(static_cast<int>(x));
}
static __device__ __forceinline__ unsigned char metile_to_f8e4m3(float x) {
  const unsigned int bits = __float_as_uint(x);
  const unsigned int sign = (bits >> 24) & 0x80u;
  const unsigned int a = bits & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7F;
  if (a >= 0x43E00000u) return static_cast<unsigned char>(sign | 0x7Eu);
  const int exponent = static_cast<int>(a >> 23) - 127;
  if (exponent >= -6)
    return static_cast<unsigned char>(sign | (((a + 0x7FFFFu + ((a >> 20) & 1u)) >> 20) - 960u));
  const int drop = 14 - exponent;
  if (drop > 24) return static_cast<unsigned char>(sign);
  const unsigned int significand = (a & 0x7FFFFFu) | 0x800000u;
  const unsigned int q = significand >> drop;
  const unsigned int rest = significand & ((1u << drop) - 1u);
  const unsigned int half = 1u << (drop - 1);
  return static_cast<unsigned char>(sign | (q + ((rest > half || (rest == half && (q & 1u) != 0u)) ? 1u : 0u)));
}

static __device__ __forceinline__ void float8_body(
    const float* x,
    const metile_half* h,
    const unsigned char* e5,
    unsigned char* out,
    float* wide,
    short* s,
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
  const unsigned char v9 = static_cast<unsigned char>(190);
  const unsigned char* v10 = e5 + tid;
  const unsigned char v = in ? v10[0] : v9;
  const float* v12 = x + tid;
  const float v13 = v12[0];
  const unsigned char v14 = metile_to_f8e4m3(v13);
  const metile_half* v15 = h + tid;
  const metile_half v16 = v15[0];
  const unsigned char v17 = metile_to_f8e4m3(static_cast<float>(v16));
  const unsigned char v18 = metile_to_f8e4m3(metile_from_f8e5m2(v));
  const int v19 = 1;
  const unsigned char v20 = static_cast<unsigned char>(__shfl_xor_sync(0xffffffffu, int(v18), int(v19)));
  const int v21 = 32;
  const bool v22 = tid < v21;
  const unsigned char v23 = v22 ? v14 : v17;
  const int v24 = 16;
  const bool v25 = tid < v24;
  const unsigned char v26 = v25 ? v20 : v23;
  unsigned char* v27 = out + tid;
  if (in) { v27[0] = v26; }
  const float v28 = metile_from_f8e5m2(v);
  float* v29 = wide + tid;
  if (in) { v29[0] = v28; }
  const short v30 = metile_saturate_i16(v28);
  const short v31 = 30000;
  const short v32 = v30 + v31;
  short* v33 = s + tid;
  if (in) { v33[0] = v32; }
}

extern "C" __global__ void float8(
    const float* x,
    const metile_half* h,
    const unsigned char* e5,
    unsigned char* out,
    float* wide,
    short* s,
    int n) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  float8_body(x, h, e5, out, wide, s, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
