// CUDA C++ from meTile: NVRTC built-ins only, no includes.

static __device__ __forceinline__ void metile_packed_store(void* p, float4 v) {
  asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" :: "l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory");
}
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
  const float v12 = 0.0f;
  float v14 = v9;
  float v15 = v9;
  float v16 = v9;
  float v17 = v9;
  float v18 = v12;
  float v19 = v12;
  float v20 = v12;
  float v21 = v12;
  for (int i = v10; i < n_cols; i += v11) {
    const int v22 = 127;
    const int v23 = v4 & v22;
    const int v24 = 2;
    const int v25 = v23 << v24;
    const int v26 = 1;
    const int v27 = v25 + v26;
    const int v29 = v25 + v24;
    const int v30 = 3;
    const int v31 = v25 + v30;
    const int v32 = i + v25;
    const int v33 = i + v27;
    const int v34 = i + v29;
    const int v35 = i + v31;
    const bool v36 = v32 < n_cols;
    const bool v37 = v33 < n_cols;
    const bool v38 = v34 < n_cols;
    const bool v39 = v35 < n_cols;
    const float* v40 = v7 + v32;
    const float* v41 = v7 + v33;
    const float* v42 = v7 + v34;
    const float* v43 = v7 + v35;
    const bool v262 = (reinterpret_cast<unsigned long long>(v40) & 15) == 0;
    const bool v263 = v39 && v262;
    float4 v270;
    if (v263) {
      const float4 v264 = ((const float4*)(v40))[0];
      v270 = v264;
    } else {
      const float v265 = v36 ? v40[0] : v12;
      const float v266 = v37 ? v41[0] : v12;
      const float v267 = v38 ? v42[0] : v12;
      const float v268 = v39 ? v43[0] : v12;
      const float4 v269 = float4{v265, v266, v267, v268};
      v270 = v269;
    }
    const float v45 = v270.x;
    const float v46 = v270.y;
    const float v47 = v270.z;
    const float v48 = v270.w;
    const float v49 = v36 ? v45 : v9;
    const float v50 = v37 ? v46 : v9;
    const float v51 = v38 ? v47 : v9;
    const float v52 = v39 ? v48 : v9;
    const float v53 = fmaxf(v14, v49);
    const float v54 = fmaxf(v15, v50);
    const float v55 = fmaxf(v16, v51);
    const float v56 = fmaxf(v17, v52);
    const float v57 = 1.0f;
    const float v59 = v36 ? v57 : v12;
    const float v60 = v37 ? v57 : v12;
    const float v61 = v38 ? v57 : v12;
    const float v62 = v39 ? v57 : v12;
    const bool v63 = v14 == v53;
    const bool v64 = v15 == v54;
    const bool v65 = v16 == v55;
    const bool v66 = v17 == v56;
    const float v68 = v14 - v53;
    const float v69 = v15 - v54;
    const float v70 = v16 - v55;
    const float v71 = v17 - v56;
    const float v72 = expf(v68);
    const float v73 = expf(v69);
    const float v74 = expf(v70);
    const float v75 = expf(v71);
    const float v76 = v63 ? v57 : v72;
    const float v77 = v64 ? v57 : v73;
    const float v78 = v65 ? v57 : v74;
    const float v79 = v66 ? v57 : v75;
    const float v80 = v18 * v76;
    const float v81 = v19 * v77;
    const float v82 = v20 * v78;
    const float v83 = v21 * v79;
    const bool v84 = v49 == v53;
    const bool v85 = v50 == v54;
    const bool v86 = v51 == v55;
    const bool v87 = v52 == v56;
    const float v88 = v49 - v53;
    const float v89 = v50 - v54;
    const float v90 = v51 - v55;
    const float v91 = v52 - v56;
    const float v92 = expf(v88);
    const float v93 = expf(v89);
    const float v94 = expf(v90);
    const float v95 = expf(v91);
    const float v96 = v84 ? v57 : v92;
    const float v97 = v85 ? v57 : v93;
    const float v98 = v86 ? v57 : v94;
    const float v99 = v87 ? v57 : v95;
    const float v100 = v59 * v96;
    const float v101 = v60 * v97;
    const float v102 = v61 * v98;
    const float v103 = v62 * v99;
    const float v104 = v80 + v100;
    const float v105 = v81 + v101;
    const float v106 = v82 + v102;
    const float v107 = v83 + v103;
    v14 = v53;
    v15 = v54;
    v16 = v55;
    v17 = v56;
    v18 = v104;
    v19 = v105;
    v20 = v106;
    v21 = v107;
  }
  const float v108 = v14;
  const float v109 = v15;
  const float v110 = v16;
  const float v111 = v17;
  const float v112 = v18;
  const float v113 = v19;
  const float v114 = v20;
  const float v115 = v21;
  const float v117 = fmaxf(v108, v109);
  const float v118 = fmaxf(v110, v111);
  const float v119 = fmaxf(v117, v118);
  const float v120 = metile_simd_max(v119);
  float* v121 = (float*)(tg_mem + 16);
  const int v122 = int(simd_lane);
  const int v123 = int(simd_group);
  const bool v125 = v122 == v10;
  float* v126 = v121 + v123;
  if (v125) { v126[0] = v120; }
  __syncthreads();
  const float v129 = v121[0];
  const int v130 = 1;
  float* v131 = v121 + v130;
  const float v132 = v131[0];
  const int v133 = 2;
  float* v134 = v121 + v133;
  const float v135 = v134[0];
  const int v136 = 3;
  float* v137 = v121 + v136;
  const float v138 = v137[0];
  const float v139 = fmaxf(v129, v132);
  const float v140 = fmaxf(v135, v138);
  const float v141 = fmaxf(v139, v140);
  __syncthreads();
  const bool v144 = v108 == v141;
  const bool v145 = v109 == v141;
  const bool v146 = v110 == v141;
  const bool v147 = v111 == v141;
  const float v148 = 1.0f;
  const float v149 = v108 - v141;
  const float v150 = v109 - v141;
  const float v151 = v110 - v141;
  const float v152 = v111 - v141;
  const float v153 = expf(v149);
  const float v154 = expf(v150);
  const float v155 = expf(v151);
  const float v156 = expf(v152);
  const float v157 = v144 ? v148 : v153;
  const float v158 = v145 ? v148 : v154;
  const float v159 = v146 ? v148 : v155;
  const float v160 = v147 ? v148 : v156;
  const float v161 = v112 * v157;
  const float v162 = v113 * v158;
  const float v163 = v114 * v159;
  const float v164 = v115 * v160;
  const bool v165 = v141 == v141;
  const float v166 = v141 - v141;
  const float v167 = expf(v166);
  const float v168 = v165 ? v148 : v167;
  const float v169 = v12 * v168;
  const float v170 = v161 + v169;
  const float v171 = v162 + v169;
  const float v172 = v163 + v169;
  const float v173 = v164 + v169;
  const float v174 = __int_as_float(0x7f800000);
  const float v176 = fabsf(v141);
  const bool v177 = v176 == v174;
  const bool v178 = v170 != v12;
  const bool v179 = v171 != v12;
  const bool v180 = v172 != v12;
  const bool v181 = v173 != v12;
  const bool v182 = v177 && v178;
  const bool v183 = v177 && v179;
  const bool v184 = v177 && v180;
  const bool v185 = v177 && v181;
  const float v187 = v182 ? v166 : v170;
  const float v188 = v183 ? v166 : v171;
  const float v189 = v184 ? v166 : v172;
  const float v190 = v185 ? v166 : v173;
  const float v192 = v187 + v188;
  const float v193 = v189 + v190;
  const float v194 = v192 + v193;
  const float v195 = metile_simd_sum(v194);
  float* v196 = (float*)(tg_mem + 0);
  float* v201 = v196 + v123;
  if (v125) { v201[0] = v195; }
  __syncthreads();
  const float v204 = v196[0];
  float* v206 = v196 + v130;
  const float v207 = v206[0];
  float* v209 = v196 + v133;
  const float v210 = v209[0];
  float* v212 = v196 + v136;
  const float v213 = v212[0];
  const float v214 = v204 + v207;
  const float v215 = v210 + v213;
  const float v216 = v214 + v215;
  const float v218 = v148 / v216;
  for (int i_219 = v10; i_219 < n_cols; i_219 += v11) {
    const int v220 = 127;
    const int v221 = v4 & v220;
    const int v223 = v221 << v133;
    const int v225 = v223 + v130;
    const int v227 = v223 + v133;
    const int v229 = v223 + v136;
    const int v230 = i_219 + v223;
    const int v231 = i_219 + v225;
    const int v232 = i_219 + v227;
    const int v233 = i_219 + v229;
    const bool v234 = v230 < n_cols;
    const bool v235 = v231 < n_cols;
    const bool v236 = v232 < n_cols;
    const bool v237 = v233 < n_cols;
    const float* v238 = v7 + v230;
    const float* v239 = v7 + v231;
    const float* v240 = v7 + v232;
    const float* v241 = v7 + v233;
    const bool v271 = (reinterpret_cast<unsigned long long>(v238) & 15) == 0;
    const bool v272 = v237 && v271;
    float4 v279;
    if (v272) {
      const float4 v273 = ((const float4*)(v238))[0];
      v279 = v273;
    } else {
      const float v274 = v234 ? v238[0] : v12;
      const float v275 = v235 ? v239[0] : v12;
      const float v276 = v236 ? v240[0] : v12;
      const float v277 = v237 ? v241[0] : v12;
      const float4 v278 = float4{v274, v275, v276, v277};
      v279 = v278;
    }
    const float v242 = v279.x;
    const float v243 = v279.y;
    const float v244 = v279.z;
    const float v245 = v279.w;
    const float v246 = v242 - v141;
    const float v247 = v243 - v141;
    const float v248 = v244 - v141;
    const float v249 = v245 - v141;
    const float v250 = expf(v246);
    const float v251 = expf(v247);
    const float v252 = expf(v248);
    const float v253 = expf(v249);
    const float v254 = v250 * v218;
    const float v255 = v251 * v218;
    const float v256 = v252 * v218;
    const float v257 = v253 * v218;
    float* v258 = v8 + v230;
    float* v259 = v8 + v231;
    float* v260 = v8 + v232;
    float* v261 = v8 + v233;
    const bool v280 = (reinterpret_cast<unsigned long long>(v258) & 15) == 0;
    const bool v281 = v237 && v280;
    if (v281) {
      metile_packed_store(v258, float4{v254, v255, v256, v257});
    } else {
      if (v234) { v258[0] = v254; }
      if (v235) { v259[0] = v255; }
      if (v236) { v260[0] = v256; }
      if (v237) { v261[0] = v257; }
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
