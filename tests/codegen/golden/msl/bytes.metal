#include <metal_stdlib>
using namespace metal;

static inline char metile_floordiv(char a, char b) {
  const char q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline char metile_saturate_i8(float x) {
  if (x != x) return 0;
  if (x <= -128.0f) return -128;
  if (x >= 127.0f) return 127;
  return static_cast<char>(static_cast<int>(x));
}
static inline uchar metile_saturate_u8(float x) {
  if (x != x) return 0;
  if (x <= 0.0f) return 0;
  if (x >= 255.0f) return 255;
  return static_cast<uchar>(static_cast<int>(x));
}

static inline void bytes_body(
    device const char* x,
    device const float* f,
    device const half* h,
    device char* out,
    device uchar* out_u,
    int n,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int tid = int(thread_position_in_threadgroup.x);
  const bool in = tid < n;
  const char v8 = -128;
  device const char* v9 = x + tid;
  const char v = in ? v9[0] : v8;
  const char v11 = 100;
  const char sum = v + v11;
  const char v13 = -3;
  const char v14 = metile_floordiv(sum, v13);
  const char v15 = 1;
  const char v16 = v14 >> v15;
  const char v17 = abs(v);
  const char v18 = min(v16, v17);
  const int v19 = 1;
  const char v20 = char(simd_shuffle_xor(int(v18), ushort(v19)));
  const char v21 = char(simd_sum(int(v20)));
  device const float* v22 = f + tid;
  const float v23 = v22[0];
  const char v24 = metile_saturate_i8(v23);
  device const half* v25 = h + tid;
  const half v26 = v25[0];
  const uchar v27 = metile_saturate_u8(float(v26));
  const char v28 = v21 ^ v24;
  device char* v29 = out + tid;
  if (in) { v29[0] = v28; }
  const uchar v30 = static_cast<uchar>(v);
  const uchar v31 = 4;
  const uchar v32 = v30 << v31;
  const uchar v33 = max(v32, v27);
  const uchar v34 = 255;
  const uchar v35 = v33 - v34;
  device uchar* v36 = out_u + tid;
  if (in) { v36[0] = v35; }
}

kernel void bytes(
    device const char* x [[buffer(0)]],
    device const float* f [[buffer(1)]],
    device const half* h [[buffer(2)]],
    device char* out [[buffer(3)]],
    device uchar* out_u [[buffer(4)]],
    constant int& n [[buffer(5)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[16] __attribute__((aligned(16)));
  bytes_body(x, f, h, out, out_u, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
