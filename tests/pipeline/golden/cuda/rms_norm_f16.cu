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
struct __align__(8) metile_halfx4 {
  metile_half x, y, z, w;
};
static __device__ __forceinline__ float metile_simd_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void rms_norm_f16_body(
    const metile_half* x,
    const metile_half* w,
    metile_half* y,
    int n_cols,
    int row_stride,
    float eps,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int v6 = int(thread_position_in_threadgroup.x);
  const int v7 = int(threadgroup_position_in_grid.x);
  const int v8 = v7 * row_stride;
  const metile_half* v9 = x + v8;
  metile_half* v10 = y + v8;
  const float v11 = 0.0f;
  const int v12 = 0;
  const int v13 = 512;
  float v15 = v11;
  float v16 = v11;
  float v17 = v11;
  float v18 = v11;
  for (int i = v12; i < n_cols; i += v13) {
    const int v19 = 127;
    const int v20 = v6 & v19;
    const int v21 = 2;
    const int v22 = v20 << v21;
    const int v23 = 1;
    const int v24 = v22 + v23;
    const int v26 = v22 + v21;
    const int v27 = 3;
    const int v28 = v22 + v27;
    const int v29 = i + v22;
    const int v30 = i + v24;
    const int v31 = i + v26;
    const int v32 = i + v28;
    const bool v33 = v29 < n_cols;
    const bool v34 = v30 < n_cols;
    const bool v35 = v31 < n_cols;
    const bool v36 = v32 < n_cols;
    const metile_half* v37 = v9 + v29;
    const metile_half* v38 = v9 + v30;
    const metile_half* v39 = v9 + v31;
    const metile_half* v40 = v9 + v32;
    const metile_half v41 = metile_half(0.0f);
    const bool v152 = v33 && v34;
    const bool v153 = v152 && v35;
    const bool v154 = v153 && v36;
    const long long v155 = static_cast<long long>(v29);
    const long long v156 = static_cast<long long>(v32);
    const long long v157 = 3l;
    const long long v158 = v155 + v157;
    const bool v159 = v156 == v158;
    const bool v160 = v154 && v159;
    const bool v161 = (reinterpret_cast<unsigned long long>(v37) & 7) == 0;
    const bool v162 = v160 && v161;
    metile_half v42;
    metile_half v43;
    metile_half v44;
    metile_half v45;
    if (v162) {
      const metile_halfx4 v167 = ((const metile_halfx4*)(v37))[0];
      const metile_half v163 = v167.x;
      const metile_half v164 = v167.y;
      const metile_half v165 = v167.z;
      const metile_half v166 = v167.w;
      v42 = v163;
      v43 = v164;
      v44 = v165;
      v45 = v166;
    } else {
      const metile_half v168 = v33 ? v37[0] : v41;
      const metile_half v169 = v34 ? v38[0] : v41;
      const metile_half v170 = v35 ? v39[0] : v41;
      const metile_half v171 = v36 ? v40[0] : v41;
      v42 = v168;
      v43 = v169;
      v44 = v170;
      v45 = v171;
    }
    const float v46 = static_cast<float>(v42);
    const float v47 = static_cast<float>(v43);
    const float v48 = static_cast<float>(v44);
    const float v49 = static_cast<float>(v45);
    const float v50 = v46 * v46;
    const float v51 = v47 * v47;
    const float v52 = v48 * v48;
    const float v53 = v49 * v49;
    const float v54 = v15 + v50;
    const float v55 = v16 + v51;
    const float v56 = v17 + v52;
    const float v57 = v18 + v53;
    v15 = v54;
    v16 = v55;
    v17 = v56;
    v18 = v57;
  }
  const float v58 = v15;
  const float v59 = v16;
  const float v60 = v17;
  const float v61 = v18;
  const float v62 = static_cast<float>(n_cols);
  const float v64 = v58 + v59;
  const float v65 = v60 + v61;
  const float v66 = v64 + v65;
  const float v67 = metile_simd_sum(v66);
  float* v68 = (float*)(tg_mem + 0);
  const int v69 = int(simd_lane);
  const int v70 = int(simd_group);
  const bool v72 = v69 == v12;
  float* v73 = v68 + v70;
  if (v72) { v73[0] = v67; }
  __syncthreads();
  const float v76 = v68[0];
  const int v77 = 1;
  float* v78 = v68 + v77;
  const float v79 = v78[0];
  const int v80 = 2;
  float* v81 = v68 + v80;
  const float v82 = v81[0];
  const int v83 = 3;
  float* v84 = v68 + v83;
  const float v85 = v84[0];
  const float v86 = v76 + v79;
  const float v87 = v82 + v85;
  const float v88 = v86 + v87;
  const float v89 = v88 / v62;
  const float v90 = v89 + eps;
  const float v91 = rsqrtf(v90);
  for (int i_92 = v12; i_92 < n_cols; i_92 += v13) {
    const int v93 = 127;
    const int v94 = v6 & v93;
    const int v96 = v94 << v80;
    const int v98 = v96 + v77;
    const int v100 = v96 + v80;
    const int v102 = v96 + v83;
    const int v103 = i_92 + v96;
    const int v104 = i_92 + v98;
    const int v105 = i_92 + v100;
    const int v106 = i_92 + v102;
    const bool v107 = v103 < n_cols;
    const bool v108 = v104 < n_cols;
    const bool v109 = v105 < n_cols;
    const bool v110 = v106 < n_cols;
    const metile_half* v111 = v9 + v103;
    const metile_half* v112 = v9 + v104;
    const metile_half* v113 = v9 + v105;
    const metile_half* v114 = v9 + v106;
    const metile_half v115 = metile_half(0.0f);
    const bool v172 = v107 && v108;
    const bool v173 = v172 && v109;
    const bool v174 = v173 && v110;
    const long long v175 = static_cast<long long>(v103);
    const long long v176 = static_cast<long long>(v106);
    const long long v177 = 3l;
    const long long v178 = v175 + v177;
    const bool v179 = v176 == v178;
    const bool v180 = v174 && v179;
    const bool v181 = (reinterpret_cast<unsigned long long>(v111) & 7) == 0;
    const bool v182 = v180 && v181;
    metile_half v116;
    metile_half v117;
    metile_half v118;
    metile_half v119;
    if (v182) {
      const metile_halfx4 v187 = ((const metile_halfx4*)(v111))[0];
      const metile_half v183 = v187.x;
      const metile_half v184 = v187.y;
      const metile_half v185 = v187.z;
      const metile_half v186 = v187.w;
      v116 = v183;
      v117 = v184;
      v118 = v185;
      v119 = v186;
    } else {
      const metile_half v188 = v107 ? v111[0] : v115;
      const metile_half v189 = v108 ? v112[0] : v115;
      const metile_half v190 = v109 ? v113[0] : v115;
      const metile_half v191 = v110 ? v114[0] : v115;
      v116 = v188;
      v117 = v189;
      v118 = v190;
      v119 = v191;
    }
    const float v120 = static_cast<float>(v116);
    const float v121 = static_cast<float>(v117);
    const float v122 = static_cast<float>(v118);
    const float v123 = static_cast<float>(v119);
    const metile_half* v124 = w + v103;
    const metile_half* v125 = w + v104;
    const metile_half* v126 = w + v105;
    const metile_half* v127 = w + v106;
    const bool v201 = (reinterpret_cast<unsigned long long>(v124) & 7) == 0;
    const bool v202 = v180 && v201;
    metile_half v128;
    metile_half v129;
    metile_half v130;
    metile_half v131;
    if (v202) {
      const metile_halfx4 v207 = ((const metile_halfx4*)(v124))[0];
      const metile_half v203 = v207.x;
      const metile_half v204 = v207.y;
      const metile_half v205 = v207.z;
      const metile_half v206 = v207.w;
      v128 = v203;
      v129 = v204;
      v130 = v205;
      v131 = v206;
    } else {
      const metile_half v208 = v107 ? v124[0] : v115;
      const metile_half v209 = v108 ? v125[0] : v115;
      const metile_half v210 = v109 ? v126[0] : v115;
      const metile_half v211 = v110 ? v127[0] : v115;
      v128 = v208;
      v129 = v209;
      v130 = v210;
      v131 = v211;
    }
    const float v132 = static_cast<float>(v128);
    const float v133 = static_cast<float>(v129);
    const float v134 = static_cast<float>(v130);
    const float v135 = static_cast<float>(v131);
    const float v136 = v120 * v91;
    const float v137 = v121 * v91;
    const float v138 = v122 * v91;
    const float v139 = v123 * v91;
    const float v140 = v136 * v132;
    const float v141 = v137 * v133;
    const float v142 = v138 * v134;
    const float v143 = v139 * v135;
    const metile_half v144 = static_cast<metile_half>(v140);
    const metile_half v145 = static_cast<metile_half>(v141);
    const metile_half v146 = static_cast<metile_half>(v142);
    const metile_half v147 = static_cast<metile_half>(v143);
    metile_half* v148 = v10 + v103;
    metile_half* v149 = v10 + v104;
    metile_half* v150 = v10 + v105;
    metile_half* v151 = v10 + v106;
    const bool v221 = (reinterpret_cast<unsigned long long>(v148) & 7) == 0;
    const bool v222 = v180 && v221;
    if (v222) {
      ((metile_halfx4*)(v148))[0] = metile_halfx4{v144, v145, v146, v147};
    } else {
      if (v107) { v148[0] = v144; }
      if (v108) { v149[0] = v145; }
      if (v109) { v150[0] = v146; }
      if (v110) { v151[0] = v147; }
    }
  }
}

extern "C" __global__ void rms_norm_f16(
    const metile_half* x,
    const metile_half* w,
    metile_half* y,
    int n_cols,
    int row_stride,
    float eps) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  rms_norm_f16_body(x, w, y, n_cols, row_stride, eps, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
