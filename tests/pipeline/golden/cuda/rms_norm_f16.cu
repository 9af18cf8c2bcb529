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
static __device__ __forceinline__ unsigned int metile_half_pair(metile_half lo, metile_half hi) {
  return static_cast<unsigned int>(lo.bits) | (static_cast<unsigned int>(hi.bits) << 16);
}
static __device__ __forceinline__ metile_half metile_half_of_bits(unsigned int w) {
  metile_half v;
  v.bits = static_cast<unsigned short>(w);
  return v;
}
struct __align__(16) metile_halfx8 {
  unsigned int w[4];
};
static __device__ __forceinline__ void metile_packed_store(void* p, metile_halfx8 v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" :: "l"(p), "r"(v.w[0]), "r"(v.w[1]), "r"(v.w[2]), "r"(v.w[3]) : "memory");
}
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
  float v19 = v11;
  float v20 = v11;
  float v21 = v11;
  float v22 = v11;
  for (int i = v12; i < n_cols; i += v13) {
    const int v23 = 63;
    const int v24 = v6 & v23;
    const int v25 = 3;
    const int v26 = v24 << v25;
    const int v27 = 1;
    const int v28 = v26 + v27;
    const int v29 = 2;
    const int v30 = v26 + v29;
    const int v32 = v26 + v25;
    const int v33 = 4;
    const int v34 = v26 + v33;
    const int v35 = 5;
    const int v36 = v26 + v35;
    const int v37 = 6;
    const int v38 = v26 + v37;
    const int v39 = 7;
    const int v40 = v26 + v39;
    const int v41 = i + v26;
    const int v42 = i + v28;
    const int v43 = i + v30;
    const int v44 = i + v32;
    const int v45 = i + v34;
    const int v46 = i + v36;
    const int v47 = i + v38;
    const int v48 = i + v40;
    const bool v49 = v41 < n_cols;
    const bool v50 = v42 < n_cols;
    const bool v51 = v43 < n_cols;
    const bool v52 = v44 < n_cols;
    const bool v53 = v45 < n_cols;
    const bool v54 = v46 < n_cols;
    const bool v55 = v47 < n_cols;
    const bool v56 = v48 < n_cols;
    const metile_half* v57 = v9 + v41;
    const metile_half* v58 = v9 + v42;
    const metile_half* v59 = v9 + v43;
    const metile_half* v60 = v9 + v44;
    const metile_half* v61 = v9 + v45;
    const metile_half* v62 = v9 + v46;
    const metile_half* v63 = v9 + v47;
    const metile_half* v64 = v9 + v48;
    const metile_half v65 = metile_half(0.0f);
    const bool v248 = (reinterpret_cast<unsigned long long>(v57) & 15) == 0;
    const bool v249 = v56 && v248;
    metile_halfx8 v260;
    if (v249) {
      const metile_halfx8 v250 = ((const metile_halfx8*)(v57))[0];
      v260 = v250;
    } else {
      const metile_half v251 = v49 ? v57[0] : v65;
      const metile_half v252 = v50 ? v58[0] : v65;
      const metile_half v253 = v51 ? v59[0] : v65;
      const metile_half v254 = v52 ? v60[0] : v65;
      const metile_half v255 = v53 ? v61[0] : v65;
      const metile_half v256 = v54 ? v62[0] : v65;
      const metile_half v257 = v55 ? v63[0] : v65;
      const metile_half v258 = v56 ? v64[0] : v65;
      const metile_halfx8 v259 = metile_halfx8{{metile_half_pair(v251, v252), metile_half_pair(v253, v254), metile_half_pair(v255, v256), metile_half_pair(v257, v258)}};
      v260 = v259;
    }
    const metile_half v66 = metile_half_of_bits(v260.w[0]);
    const metile_half v67 = metile_half_of_bits(v260.w[0] >> 16);
    const metile_half v68 = metile_half_of_bits(v260.w[1]);
    const metile_half v69 = metile_half_of_bits(v260.w[1] >> 16);
    const metile_half v70 = metile_half_of_bits(v260.w[2]);
    const metile_half v71 = metile_half_of_bits(v260.w[2] >> 16);
    const metile_half v72 = metile_half_of_bits(v260.w[3]);
    const metile_half v73 = metile_half_of_bits(v260.w[3] >> 16);
    const float v74 = static_cast<float>(v66);
    const float v75 = static_cast<float>(v67);
    const float v76 = static_cast<float>(v68);
    const float v77 = static_cast<float>(v69);
    const float v78 = static_cast<float>(v70);
    const float v79 = static_cast<float>(v71);
    const float v80 = static_cast<float>(v72);
    const float v81 = static_cast<float>(v73);
    const float v82 = v74 * v74;
    const float v83 = v75 * v75;
    const float v84 = v76 * v76;
    const float v85 = v77 * v77;
    const float v86 = v78 * v78;
    const float v87 = v79 * v79;
    const float v88 = v80 * v80;
    const float v89 = v81 * v81;
    const float v90 = v15 + v82;
    const float v91 = v16 + v83;
    const float v92 = v17 + v84;
    const float v93 = v18 + v85;
    const float v94 = v19 + v86;
    const float v95 = v20 + v87;
    const float v96 = v21 + v88;
    const float v97 = v22 + v89;
    v15 = v90;
    v16 = v91;
    v17 = v92;
    v18 = v93;
    v19 = v94;
    v20 = v95;
    v21 = v96;
    v22 = v97;
  }
  const float v98 = v15;
  const float v99 = v16;
  const float v100 = v17;
  const float v101 = v18;
  const float v102 = v19;
  const float v103 = v20;
  const float v104 = v21;
  const float v105 = v22;
  const float v106 = static_cast<float>(n_cols);
  const float v108 = v98 + v99;
  const float v109 = v100 + v101;
  const float v110 = v102 + v103;
  const float v111 = v104 + v105;
  const float v112 = v108 + v109;
  const float v113 = v110 + v111;
  const float v114 = v112 + v113;
  const float v115 = metile_simd_sum(v114);
  float* v116 = (float*)(tg_mem + 0);
  const int v117 = int(simd_lane);
  const int v118 = int(simd_group);
  const bool v120 = v117 == v12;
  float* v121 = v116 + v118;
  if (v120) { v121[0] = v115; }
  __syncthreads();
  const float v124 = v116[0];
  const int v125 = 1;
  float* v126 = v116 + v125;
  const float v127 = v126[0];
  const float v128 = v124 + v127;
  const float v129 = v128 / v106;
  const float v130 = v129 + eps;
  const float v131 = rsqrtf(v130);
  for (int i_132 = v12; i_132 < n_cols; i_132 += v13) {
    const int v133 = 63;
    const int v134 = v6 & v133;
    const int v135 = 3;
    const int v136 = v134 << v135;
    const int v138 = v136 + v125;
    const int v139 = 2;
    const int v140 = v136 + v139;
    const int v142 = v136 + v135;
    const int v143 = 4;
    const int v144 = v136 + v143;
    const int v145 = 5;
    const int v146 = v136 + v145;
    const int v147 = 6;
    const int v148 = v136 + v147;
    const int v149 = 7;
    const int v150 = v136 + v149;
    const int v151 = i_132 + v136;
    const int v152 = i_132 + v138;
    const int v153 = i_132 + v140;
    const int v154 = i_132 + v142;
    const int v155 = i_132 + v144;
    const int v156 = i_132 + v146;
    const int v157 = i_132 + v148;
    const int v158 = i_132 + v150;
    const bool v159 = v151 < n_cols;
    const bool v160 = v152 < n_cols;
    const bool v161 = v153 < n_cols;
    const bool v162 = v154 < n_cols;
    const bool v163 = v155 < n_cols;
    const bool v164 = v156 < n_cols;
    const bool v165 = v157 < n_cols;
    const bool v166 = v158 < n_cols;
    const metile_half* v167 = v9 + v151;
    const metile_half* v168 = v9 + v152;
    const metile_half* v169 = v9 + v153;
    const metile_half* v170 = v9 + v154;
    const metile_half* v171 = v9 + v155;
    const metile_half* v172 = v9 + v156;
    const metile_half* v173 = v9 + v157;
    const metile_half* v174 = v9 + v158;
    const metile_half v175 = metile_half(0.0f);
    const bool v261 = (reinterpret_cast<unsigned long long>(v167) & 15) == 0;
    const bool v262 = v166 && v261;
    metile_halfx8 v273;
    if (v262) {
      const metile_halfx8 v263 = ((const metile_halfx8*)(v167))[0];
      v273 = v263;
    } else {
      const metile_half v264 = v159 ? v167[0] : v175;
      const metile_half v265 = v160 ? v168[0] : v175;
      const metile_half v266 = v161 ? v169[0] : v175;
      const metile_half v267 = v162 ? v170[0] : v175;
      const metile_half v268 = v163 ? v171[0] : v175;
      const metile_half v269 = v164 ? v172[0] : v175;
      const metile_half v270 = v165 ? v173[0] : v175;
      const metile_half v271 = v166 ? v174[0] : v175;
      const metile_halfx8 v272 = metile_halfx8{{metile_half_pair(v264, v265), metile_half_pair(v266, v267), metile_half_pair(v268, v269), metile_half_pair(v270, v271)}};
      v273 = v272;
    }
    const metile_half v176 = metile_half_of_bits(v273.w[0]);
    const metile_half v177 = metile_half_of_bits(v273.w[0] >> 16);
    const metile_half v178 = metile_half_of_bits(v273.w[1]);
    const metile_half v179 = metile_half_of_bits(v273.w[1] >> 16);
    const metile_half v180 = metile_half_of_bits(v273.w[2]);
    const metile_half v181 = metile_half_of_bits(v273.w[2] >> 16);
    const metile_half v182 = metile_half_of_bits(v273.w[3]);
    const metile_half v183 = metile_half_of_bits(v273.w[3] >> 16);
    const float v184 = static_cast<float>(v176);
    const float v185 = static_cast<float>(v177);
    const float v186 = static_cast<float>(v178);
    const float v187 = static_cast<float>(v179);
    const float v188 = static_cast<float>(v180);
    const float v189 = static_cast<float>(v181);
    const float v190 = static_cast<float>(v182);
    const float v191 = static_cast<float>(v183);
    const metile_half* v192 = w + v151;
    const metile_half* v193 = w + v152;
    const metile_half* v194 = w + v153;
    const metile_half* v195 = w + v154;
    const metile_half* v196 = w + v155;
    const metile_half* v197 = w + v156;
    const metile_half* v198 = w + v157;
    const metile_half* v199 = w + v158;
    const bool v274 = (reinterpret_cast<unsigned long long>(v192) & 15) == 0;
    const bool v275 = v166 && v274;
    metile_halfx8 v286;
    if (v275) {
      const metile_halfx8 v276 = ((const metile_halfx8*)(v192))[0];
      v286 = v276;
    } else {
      const metile_half v277 = v159 ? v192[0] : v175;
      const metile_half v278 = v160 ? v193[0] : v175;
      const metile_half v279 = v161 ? v194[0] : v175;
      const metile_half v280 = v162 ? v195[0] : v175;
      const metile_half v281 = v163 ? v196[0] : v175;
      const metile_half v282 = v164 ? v197[0] : v175;
      const metile_half v283 = v165 ? v198[0] : v175;
      const metile_half v284 = v166 ? v199[0] : v175;
      const metile_halfx8 v285 = metile_halfx8{{metile_half_pair(v277, v278), metile_half_pair(v279, v280), metile_half_pair(v281, v282), metile_half_pair(v283, v284)}};
      v286 = v285;
    }
    const metile_half v200 = metile_half_of_bits(v286.w[0]);
    const metile_half v201 = metile_half_of_bits(v286.w[0] >> 16);
    const metile_half v202 = metile_half_of_bits(v286.w[1]);
    const metile_half v203 = metile_half_of_bits(v286.w[1] >> 16);
    const metile_half v204 = metile_half_of_bits(v286.w[2]);
    const metile_half v205 = metile_half_of_bits(v286.w[2] >> 16);
    const metile_half v206 = metile_half_of_bits(v286.w[3]);
    const metile_half v207 = metile_half_of_bits(v286.w[3] >> 16);
    const float v208 = static_cast<float>(v200);
    const float v209 = static_cast<float>(v201);
    const float v210 = static_cast<float>(v202);
    const float v211 = static_cast<float>(v203);
    const float v212 = static_cast<float>(v204);
    const float v213 = static_cast<float>(v205);
    const float v214 = static_cast<float>(v206);
    const float v215 = static_cast<float>(v207);
    const float v216 = v184 * v131;
    const float v217 = v185 * v131;
    const float v218 = v186 * v131;
    const float v219 = v187 * v131;
    const float v220 = v188 * v131;
    const float v221 = v189 * v131;
    const float v222 = v190 * v131;
    const float v223 = v191 * v131;
    const float v224 = v216 * v208;
    const float v225 = v217 * v209;
    const float v226 = v218 * v210;
    const float v227 = v219 * v211;
    const float v228 = v220 * v212;
    const float v229 = v221 * v213;
    const float v230 = v222 * v214;
    const float v231 = v223 * v215;
    const metile_half v232 = static_cast<metile_half>(v224);
    const metile_half v233 = static_cast<metile_half>(v225);
    const metile_half v234 = static_cast<metile_half>(v226);
    const metile_half v235 = static_cast<metile_half>(v227);
    const metile_half v236 = static_cast<metile_half>(v228);
    const metile_half v237 = static_cast<metile_half>(v229);
    const metile_half v238 = static_cast<metile_half>(v230);
    const metile_half v239 = static_cast<metile_half>(v231);
    metile_half* v240 = v10 + v151;
    metile_half* v241 = v10 + v152;
    metile_half* v242 = v10 + v153;
    metile_half* v243 = v10 + v154;
    metile_half* v244 = v10 + v155;
    metile_half* v245 = v10 + v156;
    metile_half* v246 = v10 + v157;
    metile_half* v247 = v10 + v158;
    const bool v287 = (reinterpret_cast<unsigned long long>(v240) & 15) == 0;
    const bool v288 = v166 && v287;
    if (v288) {
      metile_packed_store(v240, metile_halfx8{{metile_half_pair(v232, v233), metile_half_pair(v234, v235), metile_half_pair(v236, v237), metile_half_pair(v238, v239)}});
    } else {
      if (v159) { v240[0] = v232; }
      if (v160) { v241[0] = v233; }
      if (v161) { v242[0] = v234; }
      if (v162) { v243[0] = v235; }
      if (v163) { v244[0] = v236; }
      if (v164) { v245[0] = v237; }
      if (v165) { v246[0] = v238; }
      if (v166) { v247[0] = v239; }
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
