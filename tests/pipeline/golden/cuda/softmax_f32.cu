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
  float v18 = v9;
  float v19 = v9;
  float v20 = v9;
  float v21 = v9;
  float v22 = v12;
  float v23 = v12;
  float v24 = v12;
  float v25 = v12;
  float v26 = v12;
  float v27 = v12;
  float v28 = v12;
  float v29 = v12;
  for (int i = v10; i < n_cols; i += v11) {
    const int v30 = 63;
    const int v31 = v4 & v30;
    const int v32 = 2;
    const int v33 = v31 << v32;
    const int v34 = 1;
    const int v35 = v33 + v34;
    const int v37 = v33 + v32;
    const int v38 = 3;
    const int v39 = v33 + v38;
    const int v40 = 256;
    const int v41 = v33 + v40;
    const int v42 = 257;
    const int v43 = v33 + v42;
    const int v44 = 258;
    const int v45 = v33 + v44;
    const int v46 = 259;
    const int v47 = v33 + v46;
    const int v48 = i + v33;
    const int v49 = i + v35;
    const int v50 = i + v37;
    const int v51 = i + v39;
    const int v52 = i + v41;
    const int v53 = i + v43;
    const int v54 = i + v45;
    const int v55 = i + v47;
    const bool v56 = v48 < n_cols;
    const bool v57 = v49 < n_cols;
    const bool v58 = v50 < n_cols;
    const bool v59 = v51 < n_cols;
    const bool v60 = v52 < n_cols;
    const bool v61 = v53 < n_cols;
    const bool v62 = v54 < n_cols;
    const bool v63 = v55 < n_cols;
    const float* v64 = v7 + v48;
    const float* v65 = v7 + v49;
    const float* v66 = v7 + v50;
    const float* v67 = v7 + v51;
    const float* v68 = v7 + v52;
    const float* v69 = v7 + v53;
    const float* v70 = v7 + v54;
    const float* v71 = v7 + v55;
    const long long v426 = static_cast<long long>(v48);
    const long long v427 = static_cast<long long>(v51);
    const long long v428 = 3l;
    const long long v429 = v426 + v428;
    const bool v430 = v427 == v429;
    const bool v431 = v59 && v430;
    const bool v432 = (reinterpret_cast<unsigned long long>(v64) & 15) == 0;
    const bool v433 = v431 && v432;
    float4 v440;
    if (v433) {
      const float4 v434 = ((const float4*)(v64))[0];
      v440 = v434;
    } else {
      const float v435 = v56 ? v64[0] : v12;
      const float v436 = v57 ? v65[0] : v12;
      const float v437 = v58 ? v66[0] : v12;
      const float v438 = v59 ? v67[0] : v12;
      const float4 v439 = float4{v435, v436, v437, v438};
      v440 = v439;
    }
    const float v73 = v440.x;
    const float v74 = v440.y;
    const float v75 = v440.z;
    const float v76 = v440.w;
    const long long v441 = static_cast<long long>(v52);
    const long long v442 = static_cast<long long>(v55);
    const long long v444 = v441 + v428;
    const bool v445 = v442 == v444;
    const bool v446 = v63 && v445;
    const bool v447 = (reinterpret_cast<unsigned long long>(v68) & 15) == 0;
    const bool v448 = v446 && v447;
    float4 v455;
    if (v448) {
      const float4 v449 = ((const float4*)(v68))[0];
      v455 = v449;
    } else {
      const float v450 = v60 ? v68[0] : v12;
      const float v451 = v61 ? v69[0] : v12;
      const float v452 = v62 ? v70[0] : v12;
      const float v453 = v63 ? v71[0] : v12;
      const float4 v454 = float4{v450, v451, v452, v453};
      v455 = v454;
    }
    const float v77 = v455.x;
    const float v78 = v455.y;
    const float v79 = v455.z;
    const float v80 = v455.w;
    const float v81 = v56 ? v73 : v9;
    const float v82 = v57 ? v74 : v9;
    const float v83 = v58 ? v75 : v9;
    const float v84 = v59 ? v76 : v9;
    const float v85 = v60 ? v77 : v9;
    const float v86 = v61 ? v78 : v9;
    const float v87 = v62 ? v79 : v9;
    const float v88 = v63 ? v80 : v9;
    const float v89 = fmaxf(v14, v81);
    const float v90 = fmaxf(v15, v82);
    const float v91 = fmaxf(v16, v83);
    const float v92 = fmaxf(v17, v84);
    const float v93 = fmaxf(v18, v85);
    const float v94 = fmaxf(v19, v86);
    const float v95 = fmaxf(v20, v87);
    const float v96 = fmaxf(v21, v88);
    const float v97 = 1.0f;
    const float v99 = v56 ? v97 : v12;
    const float v100 = v57 ? v97 : v12;
    const float v101 = v58 ? v97 : v12;
    const float v102 = v59 ? v97 : v12;
    const float v103 = v60 ? v97 : v12;
    const float v104 = v61 ? v97 : v12;
    const float v105 = v62 ? v97 : v12;
    const float v106 = v63 ? v97 : v12;
    const bool v107 = v14 == v89;
    const bool v108 = v15 == v90;
    const bool v109 = v16 == v91;
    const bool v110 = v17 == v92;
    const bool v111 = v18 == v93;
    const bool v112 = v19 == v94;
    const bool v113 = v20 == v95;
    const bool v114 = v21 == v96;
    const float v116 = v14 - v89;
    const float v117 = v15 - v90;
    const float v118 = v16 - v91;
    const float v119 = v17 - v92;
    const float v120 = v18 - v93;
    const float v121 = v19 - v94;
    const float v122 = v20 - v95;
    const float v123 = v21 - v96;
    const float v124 = expf(v116);
    const float v125 = expf(v117);
    const float v126 = expf(v118);
    const float v127 = expf(v119);
    const float v128 = expf(v120);
    const float v129 = expf(v121);
    const float v130 = expf(v122);
    const float v131 = expf(v123);
    const float v132 = v107 ? v97 : v124;
    const float v133 = v108 ? v97 : v125;
    const float v134 = v109 ? v97 : v126;
    const float v135 = v110 ? v97 : v127;
    const float v136 = v111 ? v97 : v128;
    const float v137 = v112 ? v97 : v129;
    const float v138 = v113 ? v97 : v130;
    const float v139 = v114 ? v97 : v131;
    const float v140 = v22 * v132;
    const float v141 = v23 * v133;
    const float v142 = v24 * v134;
    const float v143 = v25 * v135;
    const float v144 = v26 * v136;
    const float v145 = v27 * v137;
    const float v146 = v28 * v138;
    const float v147 = v29 * v139;
    const bool v148 = v81 == v89;
    const bool v149 = v82 == v90;
    const bool v150 = v83 == v91;
    const bool v151 = v84 == v92;
    const bool v152 = v85 == v93;
    const bool v153 = v86 == v94;
    const bool v154 = v87 == v95;
    const bool v155 = v88 == v96;
    const float v156 = v81 - v89;
    const float v157 = v82 - v90;
    const float v158 = v83 - v91;
    const float v159 = v84 - v92;
    const float v160 = v85 - v93;
    const float v161 = v86 - v94;
    const float v162 = v87 - v95;
    const float v163 = v88 - v96;
    const float v164 = expf(v156);
    const float v165 = expf(v157);
    const float v166 = expf(v158);
    const float v167 = expf(v159);
    const float v168 = expf(v160);
    const float v169 = expf(v161);
    const float v170 = expf(v162);
    const float v171 = expf(v163);
    const float v172 = v148 ? v97 : v164;
    const float v173 = v149 ? v97 : v165;
    const float v174 = v150 ? v97 : v166;
    const float v175 = v151 ? v97 : v167;
    const float v176 = v152 ? v97 : v168;
    const float v177 = v153 ? v97 : v169;
    const float v178 = v154 ? v97 : v170;
    const float v179 = v155 ? v97 : v171;
    const float v180 = v99 * v172;
    const float v181 = v100 * v173;
    const float v182 = v101 * v174;
    const float v183 = v102 * v175;
    const float v184 = v103 * v176;
    const float v185 = v104 * v177;
    const float v186 = v105 * v178;
    const float v187 = v106 * v179;
    const float v188 = v140 + v180;
    const float v189 = v141 + v181;
    const float v190 = v142 + v182;
    const float v191 = v143 + v183;
    const float v192 = v144 + v184;
    const float v193 = v145 + v185;
    const float v194 = v146 + v186;
    const float v195 = v147 + v187;
    v14 = v89;
    v15 = v90;
    v16 = v91;
    v17 = v92;
    v18 = v93;
    v19 = v94;
    v20 = v95;
    v21 = v96;
    v22 = v188;
    v23 = v189;
    v24 = v190;
    v25 = v191;
    v26 = v192;
    v27 = v193;
    v28 = v194;
    v29 = v195;
  }
  const float v196 = v14;
  const float v197 = v15;
  const float v198 = v16;
  const float v199 = v17;
  const float v200 = v18;
  const float v201 = v19;
  const float v202 = v20;
  const float v203 = v21;
  const float v204 = v22;
  const float v205 = v23;
  const float v206 = v24;
  const float v207 = v25;
  const float v208 = v26;
  const float v209 = v27;
  const float v210 = v28;
  const float v211 = v29;
  const float v213 = fmaxf(v196, v197);
  const float v214 = fmaxf(v198, v199);
  const float v215 = fmaxf(v200, v201);
  const float v216 = fmaxf(v202, v203);
  const float v217 = fmaxf(v213, v214);
  const float v218 = fmaxf(v215, v216);
  const float v219 = fmaxf(v217, v218);
  const float v220 = metile_simd_max(v219);
  float* v221 = (float*)(tg_mem + 16);
  const int v222 = int(simd_lane);
  const int v223 = int(simd_group);
  const bool v225 = v222 == v10;
  float* v226 = v221 + v223;
  if (v225) { v226[0] = v220; }
  __syncthreads();
  const float v229 = v221[0];
  const int v230 = 1;
  float* v231 = v221 + v230;
  const float v232 = v231[0];
  const float v233 = fmaxf(v229, v232);
  __syncthreads();
  const bool v236 = v196 == v233;
  const bool v237 = v197 == v233;
  const bool v238 = v198 == v233;
  const bool v239 = v199 == v233;
  const bool v240 = v200 == v233;
  const bool v241 = v201 == v233;
  const bool v242 = v202 == v233;
  const bool v243 = v203 == v233;
  const float v244 = 1.0f;
  const float v245 = v196 - v233;
  const float v246 = v197 - v233;
  const float v247 = v198 - v233;
  const float v248 = v199 - v233;
  const float v249 = v200 - v233;
  const float v250 = v201 - v233;
  const float v251 = v202 - v233;
  const float v252 = v203 - v233;
  const float v253 = expf(v245);
  const float v254 = expf(v246);
  const float v255 = expf(v247);
  const float v256 = expf(v248);
  const float v257 = expf(v249);
  const float v258 = expf(v250);
  const float v259 = expf(v251);
  const float v260 = expf(v252);
  const float v261 = v236 ? v244 : v253;
  const float v262 = v237 ? v244 : v254;
  const float v263 = v238 ? v244 : v255;
  const float v264 = v239 ? v244 : v256;
  const float v265 = v240 ? v244 : v257;
  const float v266 = v241 ? v244 : v258;
  const float v267 = v242 ? v244 : v259;
  const float v268 = v243 ? v244 : v260;
  const float v269 = v204 * v261;
  const float v270 = v205 * v262;
  const float v271 = v206 * v263;
  const float v272 = v207 * v264;
  const float v273 = v208 * v265;
  const float v274 = v209 * v266;
  const float v275 = v210 * v267;
  const float v276 = v211 * v268;
  const bool v277 = v233 == v233;
  const float v278 = v233 - v233;
  const float v279 = expf(v278);
  const float v280 = v277 ? v244 : v279;
  const float v281 = v12 * v280;
  const float v282 = v269 + v281;
  const float v283 = v270 + v281;
  const float v284 = v271 + v281;
  const float v285 = v272 + v281;
  const float v286 = v273 + v281;
  const float v287 = v274 + v281;
  const float v288 = v275 + v281;
  const float v289 = v276 + v281;
  const float v290 = __int_as_float(0x7f800000);
  const float v292 = fabsf(v233);
  const bool v293 = v292 == v290;
  const bool v294 = v282 != v12;
  const bool v295 = v283 != v12;
  const bool v296 = v284 != v12;
  const bool v297 = v285 != v12;
  const bool v298 = v286 != v12;
  const bool v299 = v287 != v12;
  const bool v300 = v288 != v12;
  const bool v301 = v289 != v12;
  const bool v302 = v293 && v294;
  const bool v303 = v293 && v295;
  const bool v304 = v293 && v296;
  const bool v305 = v293 && v297;
  const bool v306 = v293 && v298;
  const bool v307 = v293 && v299;
  const bool v308 = v293 && v300;
  const bool v309 = v293 && v301;
  const float v311 = v302 ? v278 : v282;
  const float v312 = v303 ? v278 : v283;
  const float v313 = v304 ? v278 : v284;
  const float v314 = v305 ? v278 : v285;
  const float v315 = v306 ? v278 : v286;
  const float v316 = v307 ? v278 : v287;
  const float v317 = v308 ? v278 : v288;
  const float v318 = v309 ? v278 : v289;
  const float v320 = v311 + v312;
  const float v321 = v313 + v314;
  const float v322 = v315 + v316;
  const float v323 = v317 + v318;
  const float v324 = v320 + v321;
  const float v325 = v322 + v323;
  const float v326 = v324 + v325;
  const float v327 = metile_simd_sum(v326);
  float* v328 = (float*)(tg_mem + 0);
  float* v333 = v328 + v223;
  if (v225) { v333[0] = v327; }
  __syncthreads();
  const float v336 = v328[0];
  float* v338 = v328 + v230;
  const float v339 = v338[0];
  const float v340 = v336 + v339;
  const float v342 = v244 / v340;
  for (int i_343 = v10; i_343 < n_cols; i_343 += v11) {
    const int v344 = 63;
    const int v345 = v4 & v344;
    const int v346 = 2;
    const int v347 = v345 << v346;
    const int v349 = v347 + v230;
    const int v351 = v347 + v346;
    const int v352 = 3;
    const int v353 = v347 + v352;
    const int v354 = 256;
    const int v355 = v347 + v354;
    const int v356 = 257;
    const int v357 = v347 + v356;
    const int v358 = 258;
    const int v359 = v347 + v358;
    const int v360 = 259;
    const int v361 = v347 + v360;
    const int v362 = i_343 + v347;
    const int v363 = i_343 + v349;
    const int v364 = i_343 + v351;
    const int v365 = i_343 + v353;
    const int v366 = i_343 + v355;
    const int v367 = i_343 + v357;
    const int v368 = i_343 + v359;
    const int v369 = i_343 + v361;
    const bool v370 = v362 < n_cols;
    const bool v371 = v363 < n_cols;
    const bool v372 = v364 < n_cols;
    const bool v373 = v365 < n_cols;
    const bool v374 = v366 < n_cols;
    const bool v375 = v367 < n_cols;
    const bool v376 = v368 < n_cols;
    const bool v377 = v369 < n_cols;
    const float* v378 = v7 + v362;
    const float* v379 = v7 + v363;
    const float* v380 = v7 + v364;
    const float* v381 = v7 + v365;
    const float* v382 = v7 + v366;
    const float* v383 = v7 + v367;
    const float* v384 = v7 + v368;
    const float* v385 = v7 + v369;
    const long long v456 = static_cast<long long>(v362);
    const long long v457 = static_cast<long long>(v365);
    const long long v458 = 3l;
    const long long v459 = v456 + v458;
    const bool v460 = v457 == v459;
    const bool v461 = v373 && v460;
    const bool v462 = (reinterpret_cast<unsigned long long>(v378) & 15) == 0;
    const bool v463 = v461 && v462;
    float4 v470;
    if (v463) {
      const float4 v464 = ((const float4*)(v378))[0];
      v470 = v464;
    } else {
      const float v465 = v370 ? v378[0] : v12;
      const float v466 = v371 ? v379[0] : v12;
      const float v467 = v372 ? v380[0] : v12;
      const float v468 = v373 ? v381[0] : v12;
      const float4 v469 = float4{v465, v466, v467, v468};
      v470 = v469;
    }
    const float v386 = v470.x;
    const float v387 = v470.y;
    const float v388 = v470.z;
    const float v389 = v470.w;
    const long long v471 = static_cast<long long>(v366);
    const long long v472 = static_cast<long long>(v369);
    const long long v474 = v471 + v458;
    const bool v475 = v472 == v474;
    const bool v476 = v377 && v475;
    const bool v477 = (reinterpret_cast<unsigned long long>(v382) & 15) == 0;
    const bool v478 = v476 && v477;
    float4 v485;
    if (v478) {
      const float4 v479 = ((const float4*)(v382))[0];
      v485 = v479;
    } else {
      const float v480 = v374 ? v382[0] : v12;
      const float v481 = v375 ? v383[0] : v12;
      const float v482 = v376 ? v384[0] : v12;
      const float v483 = v377 ? v385[0] : v12;
      const float4 v484 = float4{v480, v481, v482, v483};
      v485 = v484;
    }
    const float v390 = v485.x;
    const float v391 = v485.y;
    const float v392 = v485.z;
    const float v393 = v485.w;
    const float v394 = v386 - v233;
    const float v395 = v387 - v233;
    const float v396 = v388 - v233;
    const float v397 = v389 - v233;
    const float v398 = v390 - v233;
    const float v399 = v391 - v233;
    const float v400 = v392 - v233;
    const float v401 = v393 - v233;
    const float v402 = expf(v394);
    const float v403 = expf(v395);
    const float v404 = expf(v396);
    const float v405 = expf(v397);
    const float v406 = expf(v398);
    const float v407 = expf(v399);
    const float v408 = expf(v400);
    const float v409 = expf(v401);
    const float v410 = v402 * v342;
    const float v411 = v403 * v342;
    const float v412 = v404 * v342;
    const float v413 = v405 * v342;
    const float v414 = v406 * v342;
    const float v415 = v407 * v342;
    const float v416 = v408 * v342;
    const float v417 = v409 * v342;
    float* v418 = v8 + v362;
    float* v419 = v8 + v363;
    float* v420 = v8 + v364;
    float* v421 = v8 + v365;
    float* v422 = v8 + v366;
    float* v423 = v8 + v367;
    float* v424 = v8 + v368;
    float* v425 = v8 + v369;
    const bool v492 = (reinterpret_cast<unsigned long long>(v418) & 15) == 0;
    const bool v493 = v461 && v492;
    if (v493) {
      metile_packed_store(v418, float4{v410, v411, v412, v413});
    } else {
      if (v370) { v418[0] = v410; }
      if (v371) { v419[0] = v411; }
      if (v372) { v420[0] = v412; }
      if (v373) { v421[0] = v413; }
    }
    const bool v500 = (reinterpret_cast<unsigned long long>(v422) & 15) == 0;
    const bool v501 = v476 && v500;
    if (v501) {
      metile_packed_store(v422, float4{v414, v415, v416, v417});
    } else {
      if (v374) { v422[0] = v414; }
      if (v375) { v423[0] = v415; }
      if (v376) { v424[0] = v416; }
      if (v377) { v425[0] = v417; }
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
