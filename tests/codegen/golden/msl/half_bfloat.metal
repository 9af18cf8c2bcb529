#include <metal_stdlib>
using namespace metal;

static inline void half_bfloat_body(
    device const half* a,
    device const bfloat* c,
    device half* out_h,
    device bfloat* out_b,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int tid = int(thread_position_in_threadgroup.x);
  device const half* v5 = a + tid;
  const half h = v5[0];
  const half v7 = half(precise::exp(float(h)));
  const half v8 = half(fast::exp2(float(h)));
  const half v9 = half(min(float(v7), float(v8)));
  const half v10 = half(0.5f);
  const half v11 = half(max(float(v9), float(v10)));
  const half v12 = half(65504.0f);
  const half v13 = half(fmod(float(v11), float(v12)));
  const half v14 = -h;
  const half v15 = v13 + v14;
  device half* v16 = out_h + tid;
  v16[0] = v15;
  device const bfloat* v17 = c + tid;
  const bfloat bf = v17[0];
  const bfloat v19 = bfloat(precise::tanh(float(bf)));
  const bfloat v20 = static_cast<bfloat>(static_cast<float>(h));
  const bfloat v21 = v19 + v20;
  const bfloat v22 = bfloat(0.100097656f);
  const bfloat v23 = v21 * v22;
  const int v24 = 1;
  const bfloat v25 = bfloat(simd_shuffle_xor(float(v23), ushort(v24)));
  device bfloat* v26 = out_b + tid;
  const bfloat v27 = v26[0];
  const bfloat v28 = v27 + v25;
  v26[0] = v28;
}

kernel void half_bfloat(
    device const half* a [[buffer(0)]],
    device const bfloat* c [[buffer(1)]],
    device half* out_h [[buffer(2)]],
    device bfloat* out_b [[buffer(3)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  half_bfloat_body(a, c, out_h, out_b, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
