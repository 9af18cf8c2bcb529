// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ void metile_packed_store(void* p, float4 v) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}

static __device__ __forceinline__ void vector_add_f32_body(
    const float* x,
    const float* y,
    float* out,
    int n,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int v4 = int(thread_position_in_threadgroup.x);
  const int v5 = 255;
  const int v6 = v4 & v5;
  const int v7 = 2;
  const int v8 = v6 << v7;
  const int v9 = 1;
  const int v10 = v8 + v9;
  const int v12 = v8 + v7;
  const int v13 = 3;
  const int v14 = v8 + v13;
  const int v15 = int(threadgroup_position_in_grid.x);
  const int v16 = 1024;
  const int v17 = v15 * v16;
  const int v18 = v17 + v8;
  const int v19 = v17 + v10;
  const int v20 = v17 + v12;
  const int v21 = v17 + v14;
  const bool v22 = v18 < n;
  const bool v23 = v19 < n;
  const bool v24 = v20 < n;
  const bool v25 = v21 < n;
  const float* v26 = y + v18;
  const float* v27 = y + v19;
  const float* v28 = y + v20;
  const float* v29 = y + v21;
  const float v30 = 0.0f;
  const bool v51 = (reinterpret_cast<unsigned long long>(v26) & 15) == 0;
  const bool v52 = v25 && v51;
  float4 v59;
  if (v52) {
    const float4 v53 = ((const float4*)(v26))[0];
    v59 = v53;
  } else {
    const float v54 = v22 ? v26[0] : v30;
    const float v55 = v23 ? v27[0] : v30;
    const float v56 = v24 ? v28[0] : v30;
    const float v57 = v25 ? v29[0] : v30;
    const float4 v58 = float4{v54, v55, v56, v57};
    v59 = v58;
  }
  const float v31 = v59.x;
  const float v32 = v59.y;
  const float v33 = v59.z;
  const float v34 = v59.w;
  const float* v35 = x + v18;
  const float* v36 = x + v19;
  const float* v37 = x + v20;
  const float* v38 = x + v21;
  const bool v60 = (reinterpret_cast<unsigned long long>(v35) & 15) == 0;
  const bool v61 = v25 && v60;
  float4 v68;
  if (v61) {
    const float4 v62 = ((const float4*)(v35))[0];
    v68 = v62;
  } else {
    const float v63 = v22 ? v35[0] : v30;
    const float v64 = v23 ? v36[0] : v30;
    const float v65 = v24 ? v37[0] : v30;
    const float v66 = v25 ? v38[0] : v30;
    const float4 v67 = float4{v63, v64, v65, v66};
    v68 = v67;
  }
  const float v39 = v68.x;
  const float v40 = v68.y;
  const float v41 = v68.z;
  const float v42 = v68.w;
  const float v43 = v39 + v31;
  const float v44 = v40 + v32;
  const float v45 = v41 + v33;
  const float v46 = v42 + v34;
  float* v47 = out + v18;
  float* v48 = out + v19;
  float* v49 = out + v20;
  float* v50 = out + v21;
  const bool v69 = (reinterpret_cast<unsigned long long>(v47) & 15) == 0;
  const bool v70 = v25 && v69;
  if (v70) {
    metile_packed_store(v47, float4{v43, v44, v45, v46});
  } else {
    if (v22) { v47[0] = v43; }
    if (v23) { v48[0] = v44; }
    if (v24) { v49[0] = v45; }
    if (v25) { v50[0] = v46; }
  }
}

extern "C" __global__ void vector_add_f32(
    const float* x,
    const float* y,
    float* out,
    int n) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  vector_add_f32_body(x, y, out, n, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
