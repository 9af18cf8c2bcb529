// CUDA C++ from meTile: NVRTC built-ins only, no includes.

struct metile_bfloat16 {
  unsigned short bits;
  metile_bfloat16() = default;
  __device__ metile_bfloat16(float f) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const { return __uint_as_float(static_cast<unsigned int>(bits) << 16); }
};
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
static __device__ __forceinline__ float metile_fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

static __device__ __forceinline__ void half_bfloat_body(
    const metile_half* a,
    const metile_bfloat16* c,
    metile_half* out_h,
    metile_bfloat16* out_b,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int tid = int(thread_position_in_threadgroup.x);
  const metile_half* v5 = a + tid;
  const metile_half h = v5[0];
  const metile_half v7 = metile_half(expf(float(h)));
  const metile_half v8 = metile_half(metile_fast_exp2(float(h)));
  const metile_half v9 = metile_half(fminf(float(v7), float(v8)));
  const metile_half v10 = metile_half(0.5f);
  const metile_half v11 = metile_half(fmaxf(float(v9), float(v10)));
  const metile_half v12 = metile_half(65504.0f);
  const metile_half v13 = metile_half(fmodf(float(v11), float(v12)));
  const metile_half v14 = -h;
  const metile_half v15 = v13 + v14;
  metile_half* v16 = out_h + tid;
  v16[0] = v15;
  const metile_bfloat16* v17 = c + tid;
  const metile_bfloat16 bf = v17[0];
  const metile_bfloat16 v19 = metile_bfloat16(tanhf(float(bf)));
  const metile_bfloat16 v20 = static_cast<metile_bfloat16>(static_cast<float>(h));
  const metile_bfloat16 v21 = v19 + v20;
  const metile_bfloat16 v22 = metile_bfloat16(0.100097656f);
  const metile_bfloat16 v23 = v21 * v22;
  const int v24 = 1;
  const metile_bfloat16 v25 = metile_bfloat16(__shfl_xor_sync(0xffffffffu, float(v23), int(v24)));
  metile_bfloat16* v26 = out_b + tid;
  const metile_bfloat16 v27 = v26[0];
  const metile_bfloat16 v28 = v27 + v25;
  v26[0] = v28;
}

extern "C" __global__ void half_bfloat(
    const metile_half* a,
    const metile_bfloat16* c,
    metile_half* out_h,
    metile_bfloat16* out_b) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  half_bfloat_body(a, c, out_h, out_b, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
