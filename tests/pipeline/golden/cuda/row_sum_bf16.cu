// CUDA C++ from meTile: NVRTC built-ins only, no includes.

struct metile_bfloat16 {
  unsigned short bits;
  metile_bfloat16() = default;
  __device__ metile_bfloat16(float f) { asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(bits) : "f"(f)); }
  __device__ operator float() const { return __uint_as_float(static_cast<unsigned int>(bits) << 16); }
};
static __device__ __forceinline__ unsigned int metile_bfloat16_pair(metile_bfloat16 lo, metile_bfloat16 hi) {
  return static_cast<unsigned int>(lo.bits) | (static_cast<unsigned int>(hi.bits) << 16);
}
static __device__ __forceinline__ metile_bfloat16 metile_bfloat16_of_bits(unsigned int w) {
  metile_bfloat16 v;
  v.bits = static_cast<unsigned short>(w);
  return v;
}
struct __align__(16) metile_bfloat16x8 {
  unsigned int w[4];
};
static __device__ __forceinline__ float metile_simd_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = v + other;
  }
  return v;
}

static __device__ __forceinline__ void row_sum_bf16_body(
    const metile_bfloat16* x,
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
  const metile_bfloat16* v7 = x + v6;
  const float v8 = 0.0f;
  const int v9 = 0;
  const int v10 = 512;
  float v12 = v8;
  float v13 = v8;
  float v14 = v8;
  float v15 = v8;
  float v16 = v8;
  float v17 = v8;
  float v18 = v8;
  float v19 = v8;
  float v20 = v8;
  float v21 = v8;
  float v22 = v8;
  float v23 = v8;
  float v24 = v8;
  float v25 = v8;
  float v26 = v8;
  float v27 = v8;
  for (int i = v9; i < n_cols; i += v10) {
    const int v28 = 31;
    const int v29 = v4 & v28;
    const int v30 = 3;
    const int v31 = v29 << v30;
    const int v32 = 1;
    const int v33 = v31 + v32;
    const int v34 = 2;
    const int v35 = v31 + v34;
    const int v37 = v31 + v30;
    const int v38 = 4;
    const int v39 = v31 + v38;
    const int v40 = 5;
    const int v41 = v31 + v40;
    const int v42 = 6;
    const int v43 = v31 + v42;
    const int v44 = 7;
    const int v45 = v31 + v44;
    const int v46 = 256;
    const int v47 = v31 + v46;
    const int v48 = 257;
    const int v49 = v31 + v48;
    const int v50 = 258;
    const int v51 = v31 + v50;
    const int v52 = 259;
    const int v53 = v31 + v52;
    const int v54 = 260;
    const int v55 = v31 + v54;
    const int v56 = 261;
    const int v57 = v31 + v56;
    const int v58 = 262;
    const int v59 = v31 + v58;
    const int v60 = 263;
    const int v61 = v31 + v60;
    const int v62 = i + v31;
    const int v63 = i + v33;
    const int v64 = i + v35;
    const int v65 = i + v37;
    const int v66 = i + v39;
    const int v67 = i + v41;
    const int v68 = i + v43;
    const int v69 = i + v45;
    const int v70 = i + v47;
    const int v71 = i + v49;
    const int v72 = i + v51;
    const int v73 = i + v53;
    const int v74 = i + v55;
    const int v75 = i + v57;
    const int v76 = i + v59;
    const int v77 = i + v61;
    const bool v78 = v62 < n_cols;
    const bool v79 = v63 < n_cols;
    const bool v80 = v64 < n_cols;
    const bool v81 = v65 < n_cols;
    const bool v82 = v66 < n_cols;
    const bool v83 = v67 < n_cols;
    const bool v84 = v68 < n_cols;
    const bool v85 = v69 < n_cols;
    const bool v86 = v70 < n_cols;
    const bool v87 = v71 < n_cols;
    const bool v88 = v72 < n_cols;
    const bool v89 = v73 < n_cols;
    const bool v90 = v74 < n_cols;
    const bool v91 = v75 < n_cols;
    const bool v92 = v76 < n_cols;
    const bool v93 = v77 < n_cols;
    const metile_bfloat16* v94 = v7 + v62;
    const metile_bfloat16* v95 = v7 + v63;
    const metile_bfloat16* v96 = v7 + v64;
    const metile_bfloat16* v97 = v7 + v65;
    const metile_bfloat16* v98 = v7 + v66;
    const metile_bfloat16* v99 = v7 + v67;
    const metile_bfloat16* v100 = v7 + v68;
    const metile_bfloat16* v101 = v7 + v69;
    const metile_bfloat16* v102 = v7 + v70;
    const metile_bfloat16* v103 = v7 + v71;
    const metile_bfloat16* v104 = v7 + v72;
    const metile_bfloat16* v105 = v7 + v73;
    const metile_bfloat16* v106 = v7 + v74;
    const metile_bfloat16* v107 = v7 + v75;
    const metile_bfloat16* v108 = v7 + v76;
    const metile_bfloat16* v109 = v7 + v77;
    const metile_bfloat16 v110 = metile_bfloat16(0.0f);
    const long long v193 = static_cast<long long>(v62);
    const long long v194 = static_cast<long long>(v69);
    const long long v195 = 7l;
    const long long v196 = v193 + v195;
    const bool v197 = v194 == v196;
    const bool v198 = v85 && v197;
    const bool v199 = (reinterpret_cast<unsigned long long>(v94) & 15) == 0;
    const bool v200 = v198 && v199;
    metile_bfloat16x8 v211;
    if (v200) {
      const metile_bfloat16x8 v201 = ((const metile_bfloat16x8*)(v94))[0];
      v211 = v201;
    } else {
      const metile_bfloat16 v202 = v78 ? v94[0] : v110;
      const metile_bfloat16 v203 = v79 ? v95[0] : v110;
      const metile_bfloat16 v204 = v80 ? v96[0] : v110;
      const metile_bfloat16 v205 = v81 ? v97[0] : v110;
      const metile_bfloat16 v206 = v82 ? v98[0] : v110;
      const metile_bfloat16 v207 = v83 ? v99[0] : v110;
      const metile_bfloat16 v208 = v84 ? v100[0] : v110;
      const metile_bfloat16 v209 = v85 ? v101[0] : v110;
      const metile_bfloat16x8 v210 = metile_bfloat16x8{{metile_bfloat16_pair(v202, v203), metile_bfloat16_pair(v204, v205), metile_bfloat16_pair(v206, v207), metile_bfloat16_pair(v208, v209)}};
      v211 = v210;
    }
    const metile_bfloat16 v111 = metile_bfloat16_of_bits(v211.w[0]);
    const metile_bfloat16 v112 = metile_bfloat16_of_bits(v211.w[0] >> 16);
    const metile_bfloat16 v113 = metile_bfloat16_of_bits(v211.w[1]);
    const metile_bfloat16 v114 = metile_bfloat16_of_bits(v211.w[1] >> 16);
    const metile_bfloat16 v115 = metile_bfloat16_of_bits(v211.w[2]);
    const metile_bfloat16 v116 = metile_bfloat16_of_bits(v211.w[2] >> 16);
    const metile_bfloat16 v117 = metile_bfloat16_of_bits(v211.w[3]);
    const metile_bfloat16 v118 = metile_bfloat16_of_bits(v211.w[3] >> 16);
    const long long v212 = static_cast<long long>(v70);
    const long long v213 = static_cast<long long>(v77);
    const long long v215 = v212 + v195;
    const bool v216 = v213 == v215;
    const bool v217 = v93 && v216;
    const bool v218 = (reinterpret_cast<unsigned long long>(v102) & 15) == 0;
    const bool v219 = v217 && v218;
    metile_bfloat16x8 v230;
    if (v219) {
      const metile_bfloat16x8 v220 = ((const metile_bfloat16x8*)(v102))[0];
      v230 = v220;
    } else {
      const metile_bfloat16 v221 = v86 ? v102[0] : v110;
      const metile_bfloat16 v222 = v87 ? v103[0] : v110;
      const metile_bfloat16 v223 = v88 ? v104[0] : v110;
      const metile_bfloat16 v224 = v89 ? v105[0] : v110;
      const metile_bfloat16 v225 = v90 ? v106[0] : v110;
      const metile_bfloat16 v226 = v91 ? v107[0] : v110;
      const metile_bfloat16 v227 = v92 ? v108[0] : v110;
      const metile_bfloat16 v228 = v93 ? v109[0] : v110;
      const metile_bfloat16x8 v229 = metile_bfloat16x8{{metile_bfloat16_pair(v221, v222), metile_bfloat16_pair(v223, v224), metile_bfloat16_pair(v225, v226), metile_bfloat16_pair(v227, v228)}};
      v230 = v229;
    }
    const metile_bfloat16 v119 = metile_bfloat16_of_bits(v230.w[0]);
    const metile_bfloat16 v120 = metile_bfloat16_of_bits(v230.w[0] >> 16);
    const metile_bfloat16 v121 = metile_bfloat16_of_bits(v230.w[1]);
    const metile_bfloat16 v122 = metile_bfloat16_of_bits(v230.w[1] >> 16);
    const metile_bfloat16 v123 = metile_bfloat16_of_bits(v230.w[2]);
    const metile_bfloat16 v124 = metile_bfloat16_of_bits(v230.w[2] >> 16);
    const metile_bfloat16 v125 = metile_bfloat16_of_bits(v230.w[3]);
    const metile_bfloat16 v126 = metile_bfloat16_of_bits(v230.w[3] >> 16);
    const float v127 = static_cast<float>(v111);
    const float v128 = static_cast<float>(v112);
    const float v129 = static_cast<float>(v113);
    const float v130 = static_cast<float>(v114);
    const float v131 = static_cast<float>(v115);
    const float v132 = static_cast<float>(v116);
    const float v133 = static_cast<float>(v117);
    const float v134 = static_cast<float>(v118);
    const float v135 = static_cast<float>(v119);
    const float v136 = static_cast<float>(v120);
    const float v137 = static_cast<float>(v121);
    const float v138 = static_cast<float>(v122);
    const float v139 = static_cast<float>(v123);
    const float v140 = static_cast<float>(v124);
    const float v141 = static_cast<float>(v125);
    const float v142 = static_cast<float>(v126);
    const float v143 = v12 + v127;
    const float v144 = v13 + v128;
    const float v145 = v14 + v129;
    const float v146 = v15 + v130;
    const float v147 = v16 + v131;
    const float v148 = v17 + v132;
    const float v149 = v18 + v133;
    const float v150 = v19 + v134;
    const float v151 = v20 + v135;
    const float v152 = v21 + v136;
    const float v153 = v22 + v137;
    const float v154 = v23 + v138;
    const float v155 = v24 + v139;
    const float v156 = v25 + v140;
    const float v157 = v26 + v141;
    const float v158 = v27 + v142;
    v12 = v143;
    v13 = v144;
    v14 = v145;
    v15 = v146;
    v16 = v147;
    v17 = v148;
    v18 = v149;
    v19 = v150;
    v20 = v151;
    v21 = v152;
    v22 = v153;
    v23 = v154;
    v24 = v155;
    v25 = v156;
    v26 = v157;
    v27 = v158;
  }
  const float v159 = v12;
  const float v160 = v13;
  const float v161 = v14;
  const float v162 = v15;
  const float v163 = v16;
  const float v164 = v17;
  const float v165 = v18;
  const float v166 = v19;
  const float v167 = v20;
  const float v168 = v21;
  const float v169 = v22;
  const float v170 = v23;
  const float v171 = v24;
  const float v172 = v25;
  const float v173 = v26;
  const float v174 = v27;
  const float v176 = v159 + v160;
  const float v177 = v161 + v162;
  const float v178 = v163 + v164;
  const float v179 = v165 + v166;
  const float v180 = v167 + v168;
  const float v181 = v169 + v170;
  const float v182 = v171 + v172;
  const float v183 = v173 + v174;
  const float v184 = v176 + v177;
  const float v185 = v178 + v179;
  const float v186 = v180 + v181;
  const float v187 = v182 + v183;
  const float v188 = v184 + v185;
  const float v189 = v186 + v187;
  const float v190 = v188 + v189;
  const float v191 = metile_simd_sum(v190);
  float* v192 = y + v5;
  v192[0] = v191;
}

extern "C" __global__ void row_sum_bf16(
    const metile_bfloat16* x,
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
  row_sum_bf16_body(x, y, n_cols, row_stride, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
