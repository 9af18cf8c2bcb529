#include <metal_stdlib>
using namespace metal;

static inline void convert_packed_body(
    device const float* x,
    device half* out,
    int n,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int v3 = 4;
  const int v4 = int(thread_position_in_threadgroup.x);
  const int first = v4 * v3;
  const int v6 = 3;
  const int last = first + v6;
  const bool whole = last < n;
  device const float* src = x + first;
  device half* dst = out + first;
  const bool v11 = (reinterpret_cast<ulong>(src) & 15) == 0;
  const bool ok = whole && v11;
  if (ok) {
    const packed_float4 v = ((device const packed_float4*)(src))[0];
    const float v14 = v.x;
    const half v15 = static_cast<half>(v14);
    const float v16 = v.y;
    const half v17 = static_cast<half>(v16);
    const float v18 = v.z;
    const half v19 = static_cast<half>(v18);
    const float v20 = v.w;
    const half v21 = static_cast<half>(v20);
    ((device packed_half4*)(dst))[0] = packed_half4(v15, v17, v19, v21);
  }
}

kernel void convert_packed(
    device const float* x [[buffer(0)]],
    device half* out [[buffer(1)]],
    constant int& n [[buffer(2)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  convert_packed_body(x, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
