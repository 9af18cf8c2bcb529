// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ float metile_simd_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = fmaxf(v, other);
  }
  return v;
}
static __device__ __forceinline__ float metile_simd_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void softmax_f32_body(
    const float* x,
    float* y,
    int n_cols,
    int row_stride,
    unsigned char* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    unsigned int simd_lane,
    unsigned int simd_group) {
  const int v4 = int(thread_position_in_threadgroup.x);
  const int v5 = int(threadgroup_position_in_grid.x);
  const int v6 = v5 * row_stride;
  const float* v7 = x + v6;
  float* v8 = y + v6;
  const float v9 = -9.99999968e+37f;
  const int v10 = 0;
  const int v11 = 512;
  float v13 = v9;
  float v14 = v9;
  float v15 = v9;
  float v16 = v9;
  for (int i = v10; i < n_cols; i += v11) {
    const int v17 = 127;
    const int v18 = v4 & v17;
    const int v19 = 2;
    const int v20 = v18 << v19;
    const int v21 = 1;
    const int v22 = v20 + v21;
    const int v24 = v20 + v19;
    const int v25 = 3;
    const int v26 = v20 + v25;
    const int v27 = i + v20;
    const int v28 = i + v22;
    const int v29 = i + v24;
    const int v30 = i + v26;
    const bool v31 = v27 < n_cols;
    const bool v32 = v28 < n_cols;
    const bool v33 = v29 < n_cols;
    const bool v34 = v30 < n_cols;
    const float* v35 = v7 + v27;
    const float* v36 = v7 + v28;
    const float* v37 = v7 + v29;
    const float* v38 = v7 + v30;
    const float v39 = 0.0f;
    const bool v205 = v31 && v32;
    const bool v206 = v205 && v33;
    const bool v207 = v206 && v34;
    const long long v208 = static_cast<long long>(v27);
    const long long v209 = static_cast<long long>(v30);
    const long long v210 = 3l;
    const long long v211 = v208 + v210;
    const bool v212 = v209 == v211;
    const bool v213 = v207 && v212;
    const bool v214 = (reinterpret_cast<unsigned long long>(v35) & 15) == 0;
    const bool v215 = v213 && v214;
    float v40;
    float v41;
    float v42;
    float v43;
    if (v215) {
      const float4 v220 = ((const float4*)(v35))[0];
      const float v216 = v220.x;
      const float v217 = v220.y;
      const float v218 = v220.z;
      const float v219 = v220.w;
      v40 = v216;
      v41 = v217;
      v42 = v218;
      v43 = v219;
    } else {
      const float v221 = v31 ? v35[0] : v39;
      const float v222 = v32 ? v36[0] : v39;
      const float v223 = v33 ? v37[0] : v39;
      const float v224 = v34 ? v38[0] : v39;
      v40 = v221;
      v41 = v222;
      v42 = v223;
      v43 = v224;
    }
    const float v44 = v31 ? v40 : v9;
    const float v45 = v32 ? v41 : v9;
    const float v46 = v33 ? v42 : v9;
    const float v47 = v34 ? v43 : v9;
    const float v48 = fmaxf(v13, v44);
    const float v49 = fmaxf(v14, v45);
    const float v50 = fmaxf(v15, v46);
    const float v51 = fmaxf(v16, v47);
    v13 = v48;
    v14 = v49;
    v15 = v50;
    v16 = v51;
  }
  const float v52 = v13;
  const float v53 = v14;
  const float v54 = v15;
  const float v55 = v16;
  const float v57 = fmaxf(v52, v53);
  const float v58 = fmaxf(v54, v55);
  const float v59 = fmaxf(v57, v58);
  const float v60 = metile_simd_max(v59);
  float* v61 = (float*)(tg_mem + 16);
  const int v62 = int(simd_lane);
  const int v63 = int(simd_group);
  const bool v65 = v62 == v10;
  float* v66 = v61 + v63;
  if (v65) { v66[0] = v60; }
  __syncthreads();
  const float v69 = v61[0];
  const int v70 = 1;
  float* v71 = v61 + v70;
  const float v72 = v71[0];
  const int v73 = 2;
  float* v74 = v61 + v73;
  const float v75 = v74[0];
  const int v76 = 3;
  float* v77 = v61 + v76;
  const float v78 = v77[0];
  const float v79 = fmaxf(v69, v72);
  const float v80 = fmaxf(v75, v78);
  const float v81 = fmaxf(v79, v80);
  __syncthreads();
  const float v82 = 0.0f;
  float v84 = v82;
  float v85 = v82;
  float v86 = v82;
  float v87 = v82;
  for (int i_83 = v10; i_83 < n_cols; i_83 += v11) {
    const int v88 = 127;
    const int v89 = v4 & v88;
    const int v91 = v89 << v73;
    const int v93 = v91 + v70;
    const int v95 = v91 + v73;
    const int v97 = v91 + v76;
    const int v98 = i_83 + v91;
    const int v99 = i_83 + v93;
    const int v100 = i_83 + v95;
    const int v101 = i_83 + v97;
    const bool v102 = v98 < n_cols;
    const bool v103 = v99 < n_cols;
    const bool v104 = v100 < n_cols;
    const bool v105 = v101 < n_cols;
    const float* v106 = v7 + v98;
    const float* v107 = v7 + v99;
    const float* v108 = v7 + v100;
    const float* v109 = v7 + v101;
    const bool v225 = v102 && v103;
    const bool v226 = v225 && v104;
    const bool v227 = v226 && v105;
    const long long v228 = static_cast<long long>(v98);
    const long long v229 = static_cast<long long>(v101);
    const long long v230 = 3l;
    const long long v231 = v228 + v230;
    const bool v232 = v229 == v231;
    const bool v233 = v227 && v232;
    const bool v234 = (reinterpret_cast<unsigned long long>(v106) & 15) == 0;
    const bool v235 = v233 && v234;
    float v110;
    float v111;
    float v112;
    float v113;
    if (v235) {
      const float4 v240 = ((const float4*)(v106))[0];
      const float v236 = v240.x;
      const float v237 = v240.y;
      const float v238 = v240.z;
      const float v239 = v240.w;
      v110 = v236;
      v111 = v237;
      v112 = v238;
      v113 = v239;
    } else {
      const float v241 = v102 ? v106[0] : v82;
      const float v242 = v103 ? v107[0] : v82;
      const float v243 = v104 ? v108[0] : v82;
      const float v244 = v105 ? v109[0] : v82;
      v110 = v241;
      v111 = v242;
      v112 = v243;
      v113 = v244;
    }
    const float v114 = v110 - v81;
    const float v115 = v111 - v81;
    const float v116 = v112 - v81;
    const float v117 = v113 - v81;
    const float v118 = expf(v114);
    const float v119 = expf(v115);
    const float v120 = expf(v116);
    const float v121 = expf(v117);
    const float v122 = v102 ? v118 : v82;
    const float v123 = v103 ? v119 : v82;
    const float v124 = v104 ? v120 : v82;
    const float v125 = v105 ? v121 : v82;
    const float v126 = v84 + v122;
    const float v127 = v85 + v123;
    const float v128 = v86 + v124;
    const float v129 = v87 + v125;
    v84 = v126;
    v85 = v127;
    v86 = v128;
    v87 = v129;
  }
  const float v130 = v84;
  const float v131 = v85;
  const float v132 = v86;
  const float v133 = v87;
  const float v135 = v130 + v131;
  const float v136 = v132 + v133;
  const float v137 = v135 + v136;
  const float v138 = metile_simd_sum(v137);
  float* v139 = (float*)(tg_mem + 0);
  float* v144 = v139 + v63;
  if (v65) { v144[0] = v138; }
  __syncthreads();
  const float v147 = v139[0];
  float* v149 = v139 + v70;
  const float v150 = v149[0];
  float* v152 = v139 + v73;
  const float v153 = v152[0];
  float* v155 = v139 + v76;
  const float v156 = v155[0];
  const float v157 = v147 + v150;
  const float v158 = v153 + v156;
  const float v159 = v157 + v158;
  const float v160 = 1.0f;
  const float v161 = v160 / v159;
  for (int i_162 = v10; i_162 < n_cols; i_162 += v11) {
    const int v163 = 127;
    const int v164 = v4 & v163;
    const int v166 = v164 << v73;
    const int v168 = v166 + v70;
    const int v170 = v166 + v73;
    const int v172 = v166 + v76;
    const int v173 = i_162 + v166;
    const int v174 = i_162 + v168;
    const int v175 = i_162 + v170;
    const int v176 = i_162 + v172;
    const bool v177 = v173 < n_cols;
    const bool v178 = v174 < n_cols;
    const bool v179 = v175 < n_cols;
    const bool v180 = v176 < n_cols;
    const float* v181 = v7 + v173;
    const float* v182 = v7 + v174;
    const float* v183 = v7 + v175;
    const float* v184 = v7 + v176;
    const bool v245 = v177 && v178;
    const bool v246 = v245 && v179;
    const bool v247 = v246 && v180;
    const long long v248 = static_cast<long long>(v173);
    const long long v249 = static_cast<long long>(v176);
    const long long v250 = 3l;
    const long long v251 = v248 + v250;
    const bool v252 = v249 == v251;
    const bool v253 = v247 && v252;
    const bool v254 = (reinterpret_cast<unsigned long long>(v181) & 15) == 0;
    const bool v255 = v253 && v254;
    float v185;
    float v186;
    float v187;
    float v188;
    if (v255) {
      const float4 v260 = ((const float4*)(v181))[0];
      const float v256 = v260.x;
      const float v257 = v260.y;
      const float v258 = v260.z;
      const float v259 = v260.w;
      v185 = v256;
      v186 = v257;
      v187 = v258;
      v188 = v259;
    } else {
      const float v261 = v177 ? v181[0] : v82;
      const float v262 = v178 ? v182[0] : v82;
      const float v263 = v179 ? v183[0] : v82;
      const float v264 = v180 ? v184[0] : v82;
      v185 = v261;
      v186 = v262;
      v187 = v263;
      v188 = v264;
    }
    const float v189 = v185 - v81;
    const float v190 = v186 - v81;
    const float v191 = v187 - v81;
    const float v192 = v188 - v81;
    const float v193 = expf(v189);
    const float v194 = expf(v190);
    const float v195 = expf(v191);
    const float v196 = expf(v192);
    const float v197 = v193 * v161;
    const float v198 = v194 * v161;
    const float v199 = v195 * v161;
    const float v200 = v196 * v161;
    float* v201 = v8 + v173;
    float* v202 = v8 + v174;
    float* v203 = v8 + v175;
    float* v204 = v8 + v176;
    const bool v274 = (reinterpret_cast<unsigned long long>(v201) & 15) == 0;
    const bool v275 = v253 && v274;
    if (v275) {
      ((float4*)(v201))[0] = float4{v197, v198, v199, v200};
    } else {
      if (v177) { v201[0] = v197; }
      if (v178) { v202[0] = v198; }
      if (v179) { v203[0] = v199; }
      if (v180) { v204[0] = v200; }
    }
  }
}

extern "C" __global__ void softmax_f32(
    const float* x,
    float* y,
    int n_cols,
    int row_stride) {
  const uint3 threadgroup_position_in_grid = blockIdx;
  const uint3 threadgroups_per_grid = gridDim;
  const uint3 thread_position_in_threadgroup = threadIdx;
  const uint3 threads_per_threadgroup = blockDim;
  const unsigned int simd_lane = threadIdx.x % 32u;
  const unsigned int simd_group = threadIdx.x / 32u;
  extern __shared__ __align__(16) unsigned char tg_mem[];
  softmax_f32_body(x, y, n_cols, row_stride, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
