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
  float v23 = v11;
  float v24 = v11;
  float v25 = v11;
  float v26 = v11;
  float v27 = v11;
  float v28 = v11;
  float v29 = v11;
  float v30 = v11;
  for (int i = v12; i < n_cols; i += v13) {
    const int v31 = 31;
    const int v32 = v6 & v31;
    const int v33 = 3;
    const int v34 = v32 << v33;
    const int v35 = 1;
    const int v36 = v34 + v35;
    const int v37 = 2;
    const int v38 = v34 + v37;
    const int v40 = v34 + v33;
    const int v41 = 4;
    const int v42 = v34 + v41;
    const int v43 = 5;
    const int v44 = v34 + v43;
    const int v45 = 6;
    const int v46 = v34 + v45;
    const int v47 = 7;
    const int v48 = v34 + v47;
    const int v49 = 256;
    const int v50 = v34 + v49;
    const int v51 = 257;
    const int v52 = v34 + v51;
    const int v53 = 258;
    const int v54 = v34 + v53;
    const int v55 = 259;
    const int v56 = v34 + v55;
    const int v57 = 260;
    const int v58 = v34 + v57;
    const int v59 = 261;
    const int v60 = v34 + v59;
    const int v61 = 262;
    const int v62 = v34 + v61;
    const int v63 = 263;
    const int v64 = v34 + v63;
    const int v65 = i + v34;
    const int v66 = i + v36;
    const int v67 = i + v38;
    const int v68 = i + v40;
    const int v69 = i + v42;
    const int v70 = i + v44;
    const int v71 = i + v46;
    const int v72 = i + v48;
    const int v73 = i + v50;
    const int v74 = i + v52;
    const int v75 = i + v54;
    const int v76 = i + v56;
    const int v77 = i + v58;
    const int v78 = i + v60;
    const int v79 = i + v62;
    const int v80 = i + v64;
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
    const bool v94 = v78 < n_cols;
    const bool v95 = v79 < n_cols;
    const bool v96 = v80 < n_cols;
    const metile_half* v97 = v9 + v65;
    const metile_half* v98 = v9 + v66;
    const metile_half* v99 = v9 + v67;
    const metile_half* v100 = v9 + v68;
    const metile_half* v101 = v9 + v69;
    const metile_half* v102 = v9 + v70;
    const metile_half* v103 = v9 + v71;
    const metile_half* v104 = v9 + v72;
    const metile_half* v105 = v9 + v73;
    const metile_half* v106 = v9 + v74;
    const metile_half* v107 = v9 + v75;
    const metile_half* v108 = v9 + v76;
    const metile_half* v109 = v9 + v77;
    const metile_half* v110 = v9 + v78;
    const metile_half* v111 = v9 + v79;
    const metile_half* v112 = v9 + v80;
    const metile_half v113 = metile_half(0.0f);
    const long long v443 = static_cast<long long>(v65);
    const long long v444 = static_cast<long long>(v72);
    const long long v445 = 7l;
    const long long v446 = v443 + v445;
    const bool v447 = v444 == v446;
    const bool v448 = v88 && v447;
    const bool v449 = (reinterpret_cast<unsigned long long>(v97) & 15) == 0;
    const bool v450 = v448 && v449;
    metile_halfx8 v461;
    if (v450) {
      const metile_halfx8 v451 = ((const metile_halfx8*)(v97))[0];
      v461 = v451;
    } else {
      const metile_half v452 = v81 ? v97[0] : v113;
      const metile_half v453 = v82 ? v98[0] : v113;
      const metile_half v454 = v83 ? v99[0] : v113;
      const metile_half v455 = v84 ? v100[0] : v113;
      const metile_half v456 = v85 ? v101[0] : v113;
      const metile_half v457 = v86 ? v102[0] : v113;
      const metile_half v458 = v87 ? v103[0] : v113;
      const metile_half v459 = v88 ? v104[0] : v113;
      const metile_halfx8 v460 = metile_halfx8{{metile_half_pair(v452, v453), metile_half_pair(v454, v455), metile_half_pair(v456, v457), metile_half_pair(v458, v459)}};
      v461 = v460;
    }
    const metile_half v114 = metile_half_of_bits(v461.w[0]);
    const metile_half v115 = metile_half_of_bits(v461.w[0] >> 16);
    const metile_half v116 = metile_half_of_bits(v461.w[1]);
    const metile_half v117 = metile_half_of_bits(v461.w[1] >> 16);
    const metile_half v118 = metile_half_of_bits(v461.w[2]);
    const metile_half v119 = metile_half_of_bits(v461.w[2] >> 16);
    const metile_half v120 = metile_half_of_bits(v461.w[3]);
    const metile_half v121 = metile_half_of_bits(v461.w[3] >> 16);
    const long long v462 = static_cast<long long>(v73);
    const long long v463 = static_cast<long long>(v80);
    const long long v465 = v462 + v445;
    const bool v466 = v463 == v465;
    const bool v467 = v96 && v466;
    const bool v468 = (reinterpret_cast<unsigned long long>(v105) & 15) == 0;
    const bool v469 = v467 && v468;
    metile_halfx8 v480;
    if (v469) {
      const metile_halfx8 v470 = ((const metile_halfx8*)(v105))[0];
      v480 = v470;
    } else {
      const metile_half v471 = v89 ? v105[0] : v113;
      const metile_half v472 = v90 ? v106[0] : v113;
      const metile_half v473 = v91 ? v107[0] : v113;
      const metile_half v474 = v92 ? v108[0] : v113;
      const metile_half v475 = v93 ? v109[0] : v113;
      const metile_half v476 = v94 ? v110[0] : v113;
      const metile_half v477 = v95 ? v111[0] : v113;
      const metile_half v478 = v96 ? v112[0] : v113;
      const metile_halfx8 v479 = metile_halfx8{{metile_half_pair(v471, v472), metile_half_pair(v473, v474), metile_half_pair(v475, v476), metile_half_pair(v477, v478)}};
      v480 = v479;
    }
    const metile_half v122 = metile_half_of_bits(v480.w[0]);
    const metile_half v123 = metile_half_of_bits(v480.w[0] >> 16);
    const metile_half v124 = metile_half_of_bits(v480.w[1]);
    const metile_half v125 = metile_half_of_bits(v480.w[1] >> 16);
    const metile_half v126 = metile_half_of_bits(v480.w[2]);
    const metile_half v127 = metile_half_of_bits(v480.w[2] >> 16);
    const metile_half v128 = metile_half_of_bits(v480.w[3]);
    const metile_half v129 = metile_half_of_bits(v480.w[3] >> 16);
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
    const float v143 = static_cast<float>(v127);
    const float v144 = static_cast<float>(v128);
    const float v145 = static_cast<float>(v129);
    const float v146 = v130 * v130;
    const float v147 = v131 * v131;
    const float v148 = v132 * v132;
    const float v149 = v133 * v133;
    const float v150 = v134 * v134;
    const float v151 = v135 * v135;
    const float v152 = v136 * v136;
    const float v153 = v137 * v137;
    const float v154 = v138 * v138;
    const float v155 = v139 * v139;
    const float v156 = v140 * v140;
    const float v157 = v141 * v141;
    const float v158 = v142 * v142;
    const float v159 = v143 * v143;
    const float v160 = v144 * v144;
    const float v161 = v145 * v145;
    const float v162 = v15 + v146;
    const float v163 = v16 + v147;
    const float v164 = v17 + v148;
    const float v165 = v18 + v149;
    const float v166 = v19 + v150;
    const float v167 = v20 + v151;
    const float v168 = v21 + v152;
    const float v169 = v22 + v153;
    const float v170 = v23 + v154;
    const float v171 = v24 + v155;
    const float v172 = v25 + v156;
    const float v173 = v26 + v157;
    const float v174 = v27 + v158;
    const float v175 = v28 + v159;
    const float v176 = v29 + v160;
    const float v177 = v30 + v161;
    v15 = v162;
    v16 = v163;
    v17 = v164;
    v18 = v165;
    v19 = v166;
    v20 = v167;
    v21 = v168;
    v22 = v169;
    v23 = v170;
    v24 = v171;
    v25 = v172;
    v26 = v173;
    v27 = v174;
    v28 = v175;
    v29 = v176;
    v30 = v177;
  }
  const float v178 = v15;
  const float v179 = v16;
  const float v180 = v17;
  const float v181 = v18;
  const float v182 = v19;
  const float v183 = v20;
  const float v184 = v21;
  const float v185 = v22;
  const float v186 = v23;
  const float v187 = v24;
  const float v188 = v25;
  const float v189 = v26;
  const float v190 = v27;
  const float v191 = v28;
  const float v192 = v29;
  const float v193 = v30;
  const float v194 = static_cast<float>(n_cols);
  const float v196 = v178 + v179;
  const float v197 = v180 + v181;
  const float v198 = v182 + v183;
  const float v199 = v184 + v185;
  const float v200 = v186 + v187;
  const float v201 = v188 + v189;
  const float v202 = v190 + v191;
  const float v203 = v192 + v193;
  const float v204 = v196 + v197;
  const float v205 = v198 + v199;
  const float v206 = v200 + v201;
  const float v207 = v202 + v203;
  const float v208 = v204 + v205;
  const float v209 = v206 + v207;
  const float v210 = v208 + v209;
  const float v211 = metile_simd_sum(v210);
  const float v212 = v211 / v194;
  const float v213 = v212 + eps;
  const float v214 = rsqrtf(v213);
  for (int i_215 = v12; i_215 < n_cols; i_215 += v13) {
    const int v216 = 31;
    const int v217 = v6 & v216;
    const int v218 = 3;
    const int v219 = v217 << v218;
    const int v220 = 1;
    const int v221 = v219 + v220;
    const int v222 = 2;
    const int v223 = v219 + v222;
    const int v225 = v219 + v218;
    const int v226 = 4;
    const int v227 = v219 + v226;
    const int v228 = 5;
    const int v229 = v219 + v228;
    const int v230 = 6;
    const int v231 = v219 + v230;
    const int v232 = 7;
    const int v233 = v219 + v232;
    const int v234 = 256;
    const int v235 = v219 + v234;
    const int v236 = 257;
    const int v237 = v219 + v236;
    const int v238 = 258;
    const int v239 = v219 + v238;
    const int v240 = 259;
    const int v241 = v219 + v240;
    const int v242 = 260;
    const int v243 = v219 + v242;
    const int v244 = 261;
    const int v245 = v219 + v244;
    const int v246 = 262;
    const int v247 = v219 + v246;
    const int v248 = 263;
    const int v249 = v219 + v248;
    const int v250 = i_215 + v219;
    const int v251 = i_215 + v221;
    const int v252 = i_215 + v223;
    const int v253 = i_215 + v225;
    const int v254 = i_215 + v227;
    const int v255 = i_215 + v229;
    const int v256 = i_215 + v231;
    const int v257 = i_215 + v233;
    const int v258 = i_215 + v235;
    const int v259 = i_215 + v237;
    const int v260 = i_215 + v239;
    const int v261 = i_215 + v241;
    const int v262 = i_215 + v243;
    const int v263 = i_215 + v245;
    const int v264 = i_215 + v247;
    const int v265 = i_215 + v249;
    const bool v266 = v250 < n_cols;
    const bool v267 = v251 < n_cols;
    const bool v268 = v252 < n_cols;
    const bool v269 = v253 < n_cols;
    const bool v270 = v254 < n_cols;
    const bool v271 = v255 < n_cols;
    const bool v272 = v256 < n_cols;
    const bool v273 = v257 < n_cols;
    const bool v274 = v258 < n_cols;
    const bool v275 = v259 < n_cols;
    const bool v276 = v260 < n_cols;
    const bool v277 = v261 < n_cols;
    const bool v278 = v262 < n_cols;
    const bool v279 = v263 < n_cols;
    const bool v280 = v264 < n_cols;
    const bool v281 = v265 < n_cols;
    const metile_half* v282 = v9 + v250;
    const metile_half* v283 = v9 + v251;
    const metile_half* v284 = v9 + v252;
    const metile_half* v285 = v9 + v253;
    const metile_half* v286 = v9 + v254;
    const metile_half* v287 = v9 + v255;
    const metile_half* v288 = v9 + v256;
    const metile_half* v289 = v9 + v257;
    const metile_half* v290 = v9 + v258;
    const metile_half* v291 = v9 + v259;
    const metile_half* v292 = v9 + v260;
    const metile_half* v293 = v9 + v261;
    const metile_half* v294 = v9 + v262;
    const metile_half* v295 = v9 + v263;
    const metile_half* v296 = v9 + v264;
    const metile_half* v297 = v9 + v265;
    const metile_half v298 = metile_half(0.0f);
    const long long v481 = static_cast<long long>(v250);
    const long long v482 = static_cast<long long>(v257);
    const long long v483 = 7l;
    const long long v484 = v481 + v483;
    const bool v485 = v482 == v484;
    const bool v486 = v273 && v485;
    const bool v487 = (reinterpret_cast<unsigned long long>(v282) & 15) == 0;
    const bool v488 = v486 && v487;
    metile_halfx8 v499;
    if (v488) {
      const metile_halfx8 v489 = ((const metile_halfx8*)(v282))[0];
      v499 = v489;
    } else {
      const metile_half v490 = v266 ? v282[0] : v298;
      const metile_half v491 = v267 ? v283[0] : v298;
      const metile_half v492 = v268 ? v284[0] : v298;
      const metile_half v493 = v269 ? v285[0] : v298;
      const metile_half v494 = v270 ? v286[0] : v298;
      const metile_half v495 = v271 ? v287[0] : v298;
      const metile_half v496 = v272 ? v288[0] : v298;
      const metile_half v497 = v273 ? v289[0] : v298;
      const metile_halfx8 v498 = metile_halfx8{{metile_half_pair(v490, v491), metile_half_pair(v492, v493), metile_half_pair(v494, v495), metile_half_pair(v496, v497)}};
      v499 = v498;
    }
    const metile_half v299 = metile_half_of_bits(v499.w[0]);
    const metile_half v300 = metile_half_of_bits(v499.w[0] >> 16);
    const metile_half v301 = metile_half_of_bits(v499.w[1]);
    const metile_half v302 = metile_half_of_bits(v499.w[1] >> 16);
    const metile_half v303 = metile_half_of_bits(v499.w[2]);
    const metile_half v304 = metile_half_of_bits(v499.w[2] >> 16);
    const metile_half v305 = metile_half_of_bits(v499.w[3]);
    const metile_half v306 = metile_half_of_bits(v499.w[3] >> 16);
    const long long v500 = static_cast<long long>(v258);
    const long long v501 = static_cast<long long>(v265);
    const long long v503 = v500 + v483;
    const bool v504 = v501 == v503;
    const bool v505 = v281 && v504;
    const bool v506 = (reinterpret_cast<unsigned long long>(v290) & 15) == 0;
    const bool v507 = v505 && v506;
    metile_halfx8 v518;
    if (v507) {
      const metile_halfx8 v508 = ((const metile_halfx8*)(v290))[0];
      v518 = v508;
    } else {
      const metile_half v509 = v274 ? v290[0] : v298;
      const metile_half v510 = v275 ? v291[0] : v298;
      const metile_half v511 = v276 ? v292[0] : v298;
      const metile_half v512 = v277 ? v293[0] : v298;
      const metile_half v513 = v278 ? v294[0] : v298;
      const metile_half v514 = v279 ? v295[0] : v298;
      const metile_half v515 = v280 ? v296[0] : v298;
      const metile_half v516 = v281 ? v297[0] : v298;
      const metile_halfx8 v517 = metile_halfx8{{metile_half_pair(v509, v510), metile_half_pair(v511, v512), metile_half_pair(v513, v514), metile_half_pair(v515, v516)}};
      v518 = v517;
    }
    const metile_half v307 = metile_half_of_bits(v518.w[0]);
    const metile_half v308 = metile_half_of_bits(v518.w[0] >> 16);
    const metile_half v309 = metile_half_of_bits(v518.w[1]);
    const metile_half v310 = metile_half_of_bits(v518.w[1] >> 16);
    const metile_half v311 = metile_half_of_bits(v518.w[2]);
    const metile_half v312 = metile_half_of_bits(v518.w[2] >> 16);
    const metile_half v313 = metile_half_of_bits(v518.w[3]);
    const metile_half v314 = metile_half_of_bits(v518.w[3] >> 16);
    const float v315 = static_cast<float>(v299);
    const float v316 = static_cast<float>(v300);
    const float v317 = static_cast<float>(v301);
    const float v318 = static_cast<float>(v302);
    const float v319 = static_cast<float>(v303);
    const float v320 = static_cast<float>(v304);
    const float v321 = static_cast<float>(v305);
    const float v322 = static_cast<float>(v306);
    const float v323 = static_cast<float>(v307);
    const float v324 = static_cast<float>(v308);
    const float v325 = static_cast<float>(v309);
    const float v326 = static_cast<float>(v310);
    const float v327 = static_cast<float>(v311);
    const float v328 = static_cast<float>(v312);
    const float v329 = static_cast<float>(v313);
    const float v330 = static_cast<float>(v314);
    const metile_half* v331 = w + v250;
    const metile_half* v332 = w + v251;
    const metile_half* v333 = w + v252;
    const metile_half* v334 = w + v253;
    const metile_half* v335 = w + v254;
    const metile_half* v336 = w + v255;
    const metile_half* v337 = w + v256;
    const metile_half* v338 = w + v257;
    const metile_half* v339 = w + v258;
    const metile_half* v340 = w + v259;
    const metile_half* v341 = w + v260;
    const metile_half* v342 = w + v261;
    const metile_half* v343 = w + v262;
    const metile_half* v344 = w + v263;
    const metile_half* v345 = w + v264;
    const metile_half* v346 = w + v265;
    const bool v525 = (reinterpret_cast<unsigned long long>(v331) & 15) == 0;
    const bool v526 = v486 && v525;
    metile_halfx8 v537;
    if (v526) {
      const metile_halfx8 v527 = ((const metile_halfx8*)(v331))[0];
      v537 = v527;
    } else {
      const metile_half v528 = v266 ? v331[0] : v298;
      const metile_half v529 = v267 ? v332[0] : v298;
      const metile_half v530 = v268 ? v333[0] : v298;
      const metile_half v531 = v269 ? v334[0] : v298;
      const metile_half v532 = v270 ? v335[0] : v298;
      const metile_half v533 = v271 ? v336[0] : v298;
      const metile_half v534 = v272 ? v337[0] : v298;
      const metile_half v535 = v273 ? v338[0] : v298;
      const metile_halfx8 v536 = metile_halfx8{{metile_half_pair(v528, v529), metile_half_pair(v530, v531), metile_half_pair(v532, v533), metile_half_pair(v534, v535)}};
      v537 = v536;
    }
    const metile_half v347 = metile_half_of_bits(v537.w[0]);
    const metile_half v348 = metile_half_of_bits(v537.w[0] >> 16);
    const metile_half v349 = metile_half_of_bits(v537.w[1]);
    const metile_half v350 = metile_half_of_bits(v537.w[1] >> 16);
    const metile_half v351 = metile_half_of_bits(v537.w[2]);
    const metile_half v352 = metile_half_of_bits(v537.w[2] >> 16);
    const metile_half v353 = metile_half_of_bits(v537.w[3]);
    const metile_half v354 = metile_half_of_bits(v537.w[3] >> 16);
    const bool v544 = (reinterpret_cast<unsigned long long>(v339) & 15) == 0;
    const bool v545 = v505 && v544;
    metile_halfx8 v556;
    if (v545) {
      const metile_halfx8 v546 = ((const metile_halfx8*)(v339))[0];
      v556 = v546;
    } else {
      const metile_half v547 = v274 ? v339[0] : v298;
      const metile_half v548 = v275 ? v340[0] : v298;
      const metile_half v549 = v276 ? v341[0] : v298;
      const metile_half v550 = v277 ? v342[0] : v298;
      const metile_half v551 = v278 ? v343[0] : v298;
      const metile_half v552 = v279 ? v344[0] : v298;
      const metile_half v553 = v280 ? v345[0] : v298;
      const metile_half v554 = v281 ? v346[0] : v298;
      const metile_halfx8 v555 = metile_halfx8{{metile_half_pair(v547, v548), metile_half_pair(v549, v550), metile_half_pair(v551, v552), metile_half_pair(v553, v554)}};
      v556 = v555;
    }
    const metile_half v355 = metile_half_of_bits(v556.w[0]);
    const metile_half v356 = metile_half_of_bits(v556.w[0] >> 16);
    const metile_half v357 = metile_half_of_bits(v556.w[1]);
    const metile_half v358 = metile_half_of_bits(v556.w[1] >> 16);
    const metile_half v359 = metile_half_of_bits(v556.w[2]);
    const metile_half v360 = metile_half_of_bits(v556.w[2] >> 16);
    const metile_half v361 = metile_half_of_bits(v556.w[3]);
    const metile_half v362 = metile_half_of_bits(v556.w[3] >> 16);
    const float v363 = static_cast<float>(v347);
    const float v364 = static_cast<float>(v348);
    const float v365 = static_cast<float>(v349);
    const float v366 = static_cast<float>(v350);
    const float v367 = static_cast<float>(v351);
    const float v368 = static_cast<float>(v352);
    const float v369 = static_cast<float>(v353);
    const float v370 = static_cast<float>(v354);
    const float v371 = static_cast<float>(v355);
    const float v372 = static_cast<float>(v356);
    const float v373 = static_cast<float>(v357);
    const float v374 = static_cast<float>(v358);
    const float v375 = static_cast<float>(v359);
    const float v376 = static_cast<float>(v360);
    const float v377 = static_cast<float>(v361);
    const float v378 = static_cast<float>(v362);
    const float v379 = v315 * v214;
    const float v380 = v316 * v214;
    const float v381 = v317 * v214;
    const float v382 = v318 * v214;
    const float v383 = v319 * v214;
    const float v384 = v320 * v214;
    const float v385 = v321 * v214;
    const float v386 = v322 * v214;
    const float v387 = v323 * v214;
    const float v388 = v324 * v214;
    const float v389 = v325 * v214;
    const float v390 = v326 * v214;
    const float v391 = v327 * v214;
    const float v392 = v328 * v214;
    const float v393 = v329 * v214;
    const float v394 = v330 * v214;
    const float v395 = v379 * v363;
    const float v396 = v380 * v364;
    const float v397 = v381 * v365;
    const float v398 = v382 * v366;
    const float v399 = v383 * v367;
    const float v400 = v384 * v368;
    const float v401 = v385 * v369;
    const float v402 = v386 * v370;
    const float v403 = v387 * v371;
    const float v404 = v388 * v372;
    const float v405 = v389 * v373;
    const float v406 = v390 * v374;
    const float v407 = v391 * v375;
    const float v408 = v392 * v376;
    const float v409 = v393 * v377;
    const float v410 = v394 * v378;
    const metile_half v411 = static_cast<metile_half>(v395);
    const metile_half v412 = static_cast<metile_half>(v396);
    const metile_half v413 = static_cast<metile_half>(v397);
    const metile_half v414 = static_cast<metile_half>(v398);
    const metile_half v415 = static_cast<metile_half>(v399);
    const metile_half v416 = static_cast<metile_half>(v400);
    const metile_half v417 = static_cast<metile_half>(v401);
    const metile_half v418 = static_cast<metile_half>(v402);
    const metile_half v419 = static_cast<metile_half>(v403);
    const metile_half v420 = static_cast<metile_half>(v404);
    const metile_half v421 = static_cast<metile_half>(v405);
    const metile_half v422 = static_cast<metile_half>(v406);
    const metile_half v423 = static_cast<metile_half>(v407);
    const metile_half v424 = static_cast<metile_half>(v408);
    const metile_half v425 = static_cast<metile_half>(v409);
    const metile_half v426 = static_cast<metile_half>(v410);
    metile_half* v427 = v10 + v250;
    metile_half* v428 = v10 + v251;
    metile_half* v429 = v10 + v252;
    metile_half* v430 = v10 + v253;
    metile_half* v431 = v10 + v254;
    metile_half* v432 = v10 + v255;
    metile_half* v433 = v10 + v256;
    metile_half* v434 = v10 + v257;
    metile_half* v435 = v10 + v258;
    metile_half* v436 = v10 + v259;
    metile_half* v437 = v10 + v260;
    metile_half* v438 = v10 + v261;
    metile_half* v439 = v10 + v262;
    metile_half* v440 = v10 + v263;
    metile_half* v441 = v10 + v264;
    metile_half* v442 = v10 + v265;
    const bool v563 = (reinterpret_cast<unsigned long long>(v427) & 15) == 0;
    const bool v564 = v486 && v563;
    if (v564) {
      metile_packed_store(v427, metile_halfx8{{metile_half_pair(v411, v412), metile_half_pair(v413, v414), metile_half_pair(v415, v416), metile_half_pair(v417, v418)}});
    } else {
      if (v266) { v427[0] = v411; }
      if (v267) { v428[0] = v412; }
      if (v268) { v429[0] = v413; }
      if (v269) { v430[0] = v414; }
      if (v270) { v431[0] = v415; }
      if (v271) { v432[0] = v416; }
      if (v272) { v433[0] = v417; }
      if (v273) { v434[0] = v418; }
    }
    const bool v571 = (reinterpret_cast<unsigned long long>(v435) & 15) == 0;
    const bool v572 = v505 && v571;
    if (v572) {
      metile_packed_store(v435, metile_halfx8{{metile_half_pair(v419, v420), metile_half_pair(v421, v422), metile_half_pair(v423, v424), metile_half_pair(v425, v426)}});
    } else {
      if (v274) { v435[0] = v419; }
      if (v275) { v436[0] = v420; }
      if (v276) { v437[0] = v421; }
      if (v277) { v438[0] = v422; }
      if (v278) { v439[0] = v423; }
      if (v279) { v440[0] = v424; }
      if (v280) { v441[0] = v425; }
      if (v281) { v442[0] = v426; }
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
