#include <metal_stdlib>
using namespace metal;

static inline void softmax_f32_body(
    device const float* x,
    device float* y,
    int n_cols,
    int row_stride,
    threadgroup uchar* tg_mem,
    uint3 threadgroup_position_in_grid,
    uint3 threadgroups_per_grid,
    uint3 thread_position_in_threadgroup,
    uint3 threads_per_threadgroup,
    uint simd_lane,
    uint simd_group) {
  const int v4 = int(thread_position_in_threadgroup.x);
  const int v5 = int(threadgroup_position_in_grid.x);
  const int v6 = v5 * row_stride;
  device const float* v7 = x + v6;
  device float* v8 = y + v6;
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
    device const float* v35 = v7 + v27;
    device const float* v36 = v7 + v28;
    device const float* v37 = v7 + v29;
    device const float* v38 = v7 + v30;
    const float v39 = 0.0f;
    const bool v205 = v31 && v32;
    const bool v206 = v205 && v33;
    const bool v207 = v206 && v34;
    const long v208 = static_cast<long>(v27);
    const long v209 = static_cast<long>(v30);
    const long v210 = 3l;
    const long v211 = v208 + v210;
    const bool v212 = v209 == v211;
    const bool v213 = v207 && v212;
    float v40;
    float v41;
    float v42;
    float v43;
    if (v213) {
      const packed_float4 v218 = ((device const packed_float4*)(v35))[0];
      const float v214 = v218.x;
      const float v215 = v218.y;
      const float v216 = v218.z;
      const float v217 = v218.w;
      v40 = v214;
      v41 = v215;
      v42 = v216;
      v43 = v217;
    } else {
      const float v219 = v31 ? v35[0] : v39;
      const float v220 = v32 ? v36[0] : v39;
      const float v221 = v33 ? v37[0] : v39;
      const float v222 = v34 ? v38[0] : v39;
      v40 = v219;
      v41 = v220;
      v42 = v221;
      v43 = v222;
    }
    const float v44 = v31 ? v40 : v9;
    const float v45 = v32 ? v41 : v9;
    const float v46 = v33 ? v42 : v9;
    const float v47 = v34 ? v43 : v9;
    const float v48 = max(v13, v44);
    const float v49 = max(v14, v45);
    const float v50 = max(v15, v46);
    const float v51 = max(v16, v47);
    v13 = v48;
    v14 = v49;
    v15 = v50;
    v16 = v51;
  }
  const float v52 = v13;
  const float v53 = v14;
  const float v54 = v15;
  const float v55 = v16;
  const float v57 = max(v52, v53);
  const float v58 = max(v54, v55);
  const float v59 = max(v57, v58);
  const float v60 = simd_max(v59);
  threadgroup float* v61 = (threadgroup float*)(tg_mem + 16);
  const int v62 = int(simd_lane);
  const int v63 = int(simd_group);
  const bool v65 = v62 == v10;
  threadgroup float* v66 = v61 + v63;
  if (v65) { v66[0] = v60; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float v69 = v61[0];
  const int v70 = 1;
  threadgroup float* v71 = v61 + v70;
  const float v72 = v71[0];
  const int v73 = 2;
  threadgroup float* v74 = v61 + v73;
  const float v75 = v74[0];
  const int v76 = 3;
  threadgroup float* v77 = v61 + v76;
  const float v78 = v77[0];
  const float v79 = max(v69, v72);
  const float v80 = max(v75, v78);
  const float v81 = max(v79, v80);
  threadgroup_barrier(mem_flags::mem_threadgroup);
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
    device const float* v106 = v7 + v98;
    device const float* v107 = v7 + v99;
    device const float* v108 = v7 + v100;
    device const float* v109 = v7 + v101;
    const bool v223 = v102 && v103;
    const bool v224 = v223 && v104;
    const bool v225 = v224 && v105;
    const long v226 = static_cast<long>(v98);
    const long v227 = static_cast<long>(v101);
    const long v228 = 3l;
    const long v229 = v226 + v228;
    const bool v230 = v227 == v229;
    const bool v231 = v225 && v230;
    float v110;
    float v111;
    float v112;
    float v113;
    if (v231) {
      const packed_float4 v236 = ((device const packed_float4*)(v106))[0];
      const float v232 = v236.x;
      const float v233 = v236.y;
      const float v234 = v236.z;
      const float v235 = v236.w;
      v110 = v232;
      v111 = v233;
      v112 = v234;
      v113 = v235;
    } else {
      const float v237 = v102 ? v106[0] : v82;
      const float v238 = v103 ? v107[0] : v82;
      const float v239 = v104 ? v108[0] : v82;
      const float v240 = v105 ? v109[0] : v82;
      v110 = v237;
      v111 = v238;
      v112 = v239;
      v113 = v240;
    }
    const float v114 = v110 - v81;
    const float v115 = v111 - v81;
    const float v116 = v112 - v81;
    const float v117 = v113 - v81;
    const float v118 = precise::exp(v114);
    const float v119 = precise::exp(v115);
    const float v120 = precise::exp(v116);
    const float v121 = precise::exp(v117);
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
  const float v138 = simd_sum(v137);
  threadgroup float* v139 = (threadgroup float*)(tg_mem + 0);
  threadgroup float* v144 = v139 + v63;
  if (v65) { v144[0] = v138; }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const float v147 = v139[0];
  threadgroup float* v149 = v139 + v70;
  const float v150 = v149[0];
  threadgroup float* v152 = v139 + v73;
  const float v153 = v152[0];
  threadgroup float* v155 = v139 + v76;
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
    device const float* v181 = v7 + v173;
    device const float* v182 = v7 + v174;
    device const float* v183 = v7 + v175;
    device const float* v184 = v7 + v176;
    const bool v241 = v177 && v178;
    const bool v242 = v241 && v179;
    const bool v243 = v242 && v180;
    const long v244 = static_cast<long>(v173);
    const long v245 = static_cast<long>(v176);
    const long v246 = 3l;
    const long v247 = v244 + v246;
    const bool v248 = v245 == v247;
    const bool v249 = v243 && v248;
    float v185;
    float v186;
    float v187;
    float v188;
    if (v249) {
      const packed_float4 v254 = ((device const packed_float4*)(v181))[0];
      const float v250 = v254.x;
      const float v251 = v254.y;
      const float v252 = v254.z;
      const float v253 = v254.w;
      v185 = v250;
      v186 = v251;
      v187 = v252;
      v188 = v253;
    } else {
      const float v255 = v177 ? v181[0] : v82;
      const float v256 = v178 ? v182[0] : v82;
      const float v257 = v179 ? v183[0] : v82;
      const float v258 = v180 ? v184[0] : v82;
      v185 = v255;
      v186 = v256;
      v187 = v257;
      v188 = v258;
    }
    const float v189 = v185 - v81;
    const float v190 = v186 - v81;
    const float v191 = v187 - v81;
    const float v192 = v188 - v81;
    const float v193 = precise::exp(v189);
    const float v194 = precise::exp(v190);
    const float v195 = precise::exp(v191);
    const float v196 = precise::exp(v192);
    const float v197 = v193 * v161;
    const float v198 = v194 * v161;
    const float v199 = v195 * v161;
    const float v200 = v196 * v161;
    device float* v201 = v8 + v173;
    device float* v202 = v8 + v174;
    device float* v203 = v8 + v175;
    device float* v204 = v8 + v176;
    if (v249) {
      ((device packed_float4*)(v201))[0] = packed_float4(v197, v198, v199, v200);
    } else {
      if (v177) { v201[0] = v197; }
      if (v178) { v202[0] = v198; }
      if (v179) { v203[0] = v199; }
      if (v180) { v204[0] = v200; }
    }
  }
}

kernel void softmax_f32(
    device const float* x [[buffer(0)]],
    device float* y [[buffer(1)]],
    constant int& n_cols [[buffer(2)]],
    constant int& row_stride [[buffer(3)]],
    uint3 threadgroup_position_in_grid [[threadgroup_position_in_grid]],
    uint3 threadgroups_per_grid [[threadgroups_per_grid]],
    uint3 thread_position_in_threadgroup [[thread_position_in_threadgroup]],
    uint3 threads_per_threadgroup [[threads_per_threadgroup]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
  threadgroup uchar tg_mem[32] __attribute__((aligned(16)));
  softmax_f32_body(x, y, n_cols, row_stride, tg_mem, threadgroup_position_in_grid, threadgroups_per_grid, thread_position_in_threadgroup, threads_per_threadgroup, simd_lane, simd_group);
}
