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
  const int v5 = 127;
  const int v6 = v4 & v5;
  const int v7 = 2;
  const int v8 = v6 << v7;
  const int v9 = 1;
  const int v10 = v8 + v9;
  const int v12 = v8 + v7;
  const int v13 = 3;
  const int v14 = v8 + v13;
  const int v15 = 512;
  const int v16 = v8 + v15;
  const int v17 = 513;
  const int v18 = v8 + v17;
  const int v19 = 514;
  const int v20 = v8 + v19;
  const int v21 = 515;
  const int v22 = v8 + v21;
  const int v23 = int(threadgroup_position_in_grid.x);
  const int v24 = 1024;
  const int v25 = v23 * v24;
  const int v26 = v25 + v8;
  const int v27 = v25 + v10;
  const int v28 = v25 + v12;
  const int v29 = v25 + v14;
  const int v30 = v25 + v16;
  const int v31 = v25 + v18;
  const int v32 = v25 + v20;
  const int v33 = v25 + v22;
  const bool v34 = v26 < n;
  const bool v35 = v27 < n;
  const bool v36 = v28 < n;
  const bool v37 = v29 < n;
  const bool v38 = v30 < n;
  const bool v39 = v31 < n;
  const bool v40 = v32 < n;
  const bool v41 = v33 < n;
  const float* v42 = y + v26;
  const float* v43 = y + v27;
  const float* v44 = y + v28;
  const float* v45 = y + v29;
  const float* v46 = y + v30;
  const float* v47 = y + v31;
  const float* v48 = y + v32;
  const float* v49 = y + v33;
  const float v50 = 0.0f;
  const long long v91 = static_cast<long long>(v26);
  const long long v92 = static_cast<long long>(v29);
  const long long v93 = 3l;
  const long long v94 = v91 + v93;
  const bool v95 = v92 == v94;
  const bool v96 = v37 && v95;
  const bool v97 = (reinterpret_cast<unsigned long long>(v42) & 15) == 0;
  const bool v98 = v96 && v97;
  float4 v105;
  if (v98) {
    const float4 v99 = ((const float4*)(v42))[0];
    v105 = v99;
  } else {
    const float v100 = v34 ? v42[0] : v50;
    const float v101 = v35 ? v43[0] : v50;
    const float v102 = v36 ? v44[0] : v50;
    const float v103 = v37 ? v45[0] : v50;
    const float4 v104 = float4{v100, v101, v102, v103};
    v105 = v104;
  }
  const float v51 = v105.x;
  const float v52 = v105.y;
  const float v53 = v105.z;
  const float v54 = v105.w;
  const long long v106 = static_cast<long long>(v30);
  const long long v107 = static_cast<long long>(v33);
  const long long v109 = v106 + v93;
  const bool v110 = v107 == v109;
  const bool v111 = v41 && v110;
  const bool v112 = (reinterpret_cast<unsigned long long>(v46) & 15) == 0;
  const bool v113 = v111 && v112;
  float4 v120;
  if (v113) {
    const float4 v114 = ((const float4*)(v46))[0];
    v120 = v114;
  } else {
    const float v115 = v38 ? v46[0] : v50;
    const float v116 = v39 ? v47[0] : v50;
    const float v117 = v40 ? v48[0] : v50;
    const float v118 = v41 ? v49[0] : v50;
    const float4 v119 = float4{v115, v116, v117, v118};
    v120 = v119;
  }
  const float v55 = v120.x;
  const float v56 = v120.y;
  const float v57 = v120.z;
  const float v58 = v120.w;
  const float* v59 = x + v26;
  const float* v60 = x + v27;
  const float* v61 = x + v28;
  const float* v62 = x + v29;
  const float* v63 = x + v30;
  const float* v64 = x + v31;
  const float* v65 = x + v32;
  const float* v66 = x + v33;
  const bool v127 = (reinterpret_cast<unsigned long long>(v59) & 15) == 0;
  const bool v128 = v96 && v127;
  float4 v135;
  if (v128) {
    const float4 v129 = ((const float4*)(v59))[0];
    v135 = v129;
  } else {
    const float v130 = v34 ? v59[0] : v50;
    const float v131 = v35 ? v60[0] : v50;
    const float v132 = v36 ? v61[0] : v50;
    const float v133 = v37 ? v62[0] : v50;
    const float4 v134 = float4{v130, v131, v132, v133};
    v135 = v134;
  }
  const float v67 = v135.x;
  const float v68 = v135.y;
  const float v69 = v135.z;
  const float v70 = v135.w;
  const bool v142 = (reinterpret_cast<unsigned long long>(v63) & 15) == 0;
  const bool v143 = v111 && v142;
  float4 v150;
  if (v143) {
    const float4 v144 = ((const float4*)(v63))[0];
    v150 = v144;
  } else {
    const float v145 = v38 ? v63[0] : v50;
    const float v146 = v39 ? v64[0] : v50;
    const float v147 = v40 ? v65[0] : v50;
    const float v148 = v41 ? v66[0] : v50;
    const float4 v149 = float4{v145, v146, v147, v148};
    v150 = v149;
  }
  const float v71 = v150.x;
  const float v72 = v150.y;
  const float v73 = v150.z;
  const float v74 = v150.w;
  const float v75 = v67 + v51;
  const float v76 = v68 + v52;
  const float v77 = v69 + v53;
  const float v78 = v70 + v54;
  const float v79 = v71 + v55;
  const float v80 = v72 + v56;
  const float v81 = v73 + v57;
  const float v82 = v74 + v58;
  float* v83 = out + v26;
  float* v84 = out + v27;
  float* v85 = out + v28;
  float* v86 = out + v29;
  float* v87 = out + v30;
  float* v88 = out + v31;
  float* v89 = out + v32;
  float* v90 = out + v33;
  const bool v157 = (reinterpret_cast<unsigned long long>(v83) & 15) == 0;
  const bool v158 = v96 && v157;
  if (v158) {
    metile_packed_store(v83, float4{v75, v76, v77, v78});
  } else {
    if (v34) { v83[0] = v75; }
    if (v35) { v84[0] = v76; }
    if (v36) { v85[0] = v77; }
    if (v37) { v86[0] = v78; }
  }
  const bool v165 = (reinterpret_cast<unsigned long long>(v87) & 15) == 0;
  const bool v166 = v111 && v165;
  if (v166) {
    metile_packed_store(v87, float4{v79, v80, v81, v82});
  } else {
    if (v38) { v87[0] = v79; }
    if (v39) { v88[0] = v80; }
    if (v40) { v89[0] = v81; }
    if (v41) { v90[0] = v82; }
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
