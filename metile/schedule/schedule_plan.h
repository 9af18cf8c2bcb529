// SchedulePlan: what plan_schedule decided before lowering, each decision with its reason
// (seed 002: "schedule_plan: immutable pre-lowering decisions and selection reasons").
//
// Contract for lowering (lower_to_metal and the matrix lowerings read it from the lowering
// context; these field names are stable):
//   backend          never Auto; Elementwise for kernels without matrix work
//   strategy         how the target implements the backend (one backend may have several
//                    strategies, one per Target facility: a new facility such as sm90's
//                    wgmma is a new MatrixStrategy value and a lowering of it, not a new IR)
//   num_simdgroups   SIMD groups per threadgroup (the traced lanes'); threads_per_threadgroup
//                    = num_simdgroups * simd_width
//   simdgroups_m/_n  the SIMD-group grid over the first `dot`'s output tile (WM x WN, m * n
//                    == num_simdgroups, lower_dot_simdgroup's rule, which picks each dot's);
//                    1 x 1 for Elementwise and SimdgroupInline
//   staging          never Auto: where matrix temporaries live (Device or Threadgroup); for
//                    Elementwise, where the kernel's own memory operations stage data
//   vector_width     0: the compiler chooses; 1: no compiler vectorization; 4: vectorized
//                    aligned interiors are required (masked tails may stay scalar)
//   double_buffer    nullopt: the lowering chooses; true: a materialised software double
//                    buffer is required; false: prohibited
//   pipeline_stages  the slots a K loop of the canonical form (acc = dot(a, b, acc) with its
//                    operand copies) is staged through (lower_pipelined_loop.cc): 0 for none;
//                    required when double_buffer is true, else where it applies
//   requested        the caller's Schedule (nullopt: SCHEDULE omitted)
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "metile/schedule/async_gemm.h"
#include "metile/schedule/schedule.h"

namespace metile::schedule {

enum class MatrixStrategy : uint8_t {
  None,             // Elementwise: no matrix unit
  SimdgroupMatrix,  // MSL simdgroup_matrix<T, 8, 8> (Apple GPUs, the host emulator)
  MmaSync,          // CUDA mma.sync warp fragments, behind the same Metal IR matrix ops
  MppMatmul2d,      // Metal 4 mpp::tensor_ops::matmul2d (apple-m5)
  WgmmaTma,         // sm90: TMA into an mbarrier ring, wgmma, warp-specialised (docs/hopper.md)
  WgmmaPipelined,   // sm90: the software pipeline's K loop on wgmma (its slots 128-byte
                    // swizzled, the accumulator in registers); other dots on mma.sync
  WgmmaStaged,      // sm90: every dot on wgmma, a and the accumulator in wgmma's registers, b
                    // staged by its threads into 128-byte-swizzled scratch (attention's dots)
};

std::string_view matrix_strategy_name(MatrixStrategy s);  // "none", "simdgroup_matrix", ...

struct SchedulePlan {
  Backend backend = Backend::Elementwise;
  std::string backend_reason;
  MatrixStrategy strategy = MatrixStrategy::None;

  int num_simdgroups = 1;
  int simd_width = 32;
  int threads_per_threadgroup = 32;
  int simdgroups_m = 1;
  int simdgroups_n = 1;
  std::string geometry_reason;

  Staging staging = Staging::Device;
  std::string staging_reason;

  int vector_width = 0;
  std::string vector_width_reason;

  std::optional<bool> double_buffer;
  std::string double_buffer_reason;
  int pipeline_stages = 0;

  std::optional<Schedule> requested;

  // WgmmaTma: the GEMM it lowers and its pipeline (async_gemm.h).
  std::optional<AsyncGemm> async_gemm;

  bool matrix() const { return backend != Backend::Elementwise; }
  nlohmann::json to_json() const;
};

}  // namespace metile::schedule
