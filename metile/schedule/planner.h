// plan_schedule's planner: one planning run (the kernel, the Target, what was asked, the plan so
// far), whose decisions live in one file each: plan_backend.cc (backend, matrix strategy and the
// wgmma_tma pipeline), plan_geometry.cc (lanes and SIMD-group tiling), plan_staging.cc and
// plan_buffering.cc (vector width, double buffering); planner.cc runs them in order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>
#include "metile/lower/device_dot_operands.h"
#include "metile/lower/threadgroup_allocator.h"
#include "metile/schedule/plan_schedule.h"
#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::schedule::planning {

// The kernel's matrix work, in program order: every dot, and every op that takes or makes an
// 8x8 fragment (the types say so, whatever the op).
std::vector<const ir::Op*> matrix_ops(const ir::Kernel& k);

// The dots of distributed 2-D tiles, which the simdgroup and tensor backends tile over their
// SIMD groups; the other matrix ops hold 8x8 fragments, which only simdgroup_inline lowers.
std::vector<const ir::Op*> tile_dots(const ir::Kernel& k, const std::vector<const ir::Op*>& ops);

// A control of the Schedule as the user wrote it: "backend='simdgroup'", "vector_width=4".
std::string show(const Schedule& s, const std::string& control);

inline std::string text(int64_t v) {
  return std::to_string(v);
}

// The matrix tile side of the SIMD-group matrix facilities (8x8 simdgroup_matrix; mma.sync
// tiles are multiples of it).
inline constexpr int64_t kMatrixTile = 8;

// One planning run: the kernel, the Target, what was asked, and the plan so far.
class Planner {
 public:
  Planner(const ir::Kernel& k, const target::Target& t, const lower::ThreadPlan& lanes,
          const std::optional<Schedule>& requested, const AsyncGemm* gemm)
      : gemm_(gemm),
        k_(k),
        target_(t),
        lanes_(lanes),
        asked_(requested.value_or(Schedule{})),
        matrix_ops_(matrix_ops(k)),
        dots_(tile_dots(k, matrix_ops_)),
        descriptor_gemms_(std::count_if(
            matrix_ops_.begin(), matrix_ops_.end(),
            [](const ir::Op* op) { return op->kind == ir::OpKind::DescriptorMatmul; })) {
    plan_.requested = requested;
    plan_.simd_width = t.simd_width;
  }

  SchedulePlan run();

 private:
  // The error for a requirement that cannot be met: the control, the kernel and why.
  template <typename Error = UserError>
  [[noreturn]] void reject(const std::string& control, const std::string& why) const {
    throw Error("plan_schedule: Schedule(" + show(asked_, control) +
                ") cannot be met for kernel '" + k_.name + "': " + why);
  }

  bool whole_tile() const {
    return plan_.backend == Backend::Simdgroup || plan_.backend == Backend::TensorOps;
  }

  // ---- backend -------------------------------------------------------------------------
  void choose_backend();

  // How the target implements a matrix backend; a facility it lacks is NotSupported.
  void choose_strategy();

  // ---- the wgmma_tma strategy (docs/hopper.md) ------------------------------------------
  // Why the kernel cannot take target's wgmma_tma strategy; empty when it can.
  std::string wgmma_unfit() const;
  std::string tma_misaligned() const;

  // The restricted schedule: the ring, the warp groups and the tile order are fixed, so the
  // controls that would change them are rejected by name.
  void choose_wgmma_pipeline();

  // ---- geometry ------------------------------------------------------------------------
  // Elementwise and simdgroup_inline kernels run on the lanes they were traced with.
  void choose_lane_geometry();

  // Simdgroup and tensor_ops run on the traced lanes and tile each dot's [M, N] output over
  // their SIMD groups as WM x WN, whole 8x8 fragments per group (lower_dot_simdgroup's
  // rule); the plan reports the first dot's grid.
  void choose_matrix_tiling();

  // Metal 4's matmul2d spreads the output tile over execution_simdgroups<N> itself: the
  // compiler places nothing, so the grid is 1 x 1 and the lanes must be whole SIMD groups.
  void choose_tensor_geometry();

  // WM x WN == groups (powers of two) with whole 8x8 fragments per SIMD group, the squarest
  // per-group block first; nullopt when none fits or the lanes are no whole SIMD groups.
  std::optional<std::pair<int, int>> simdgroup_grid(int64_t groups, int64_t rows,
                                                    int64_t columns) const;

  // Whether the target has SIMD-group matrices and the traced lanes tile every dot.
  bool simdgroup_fits() const;

  std::optional<int64_t> attr(const char* name) const;

  // NUM_SG, WM and WN constexprs of GEMM kernels written before Schedule: they must agree
  // with the geometry (and so with any Schedule requirement, which the geometry meets).
  void check_legacy_geometry() const;

  // ---- staging -------------------------------------------------------------------------
  void choose_staging();

  // The operand tiles of every dot, staged once (twice with a double buffer).
  void choose_matrix_staging();

  // Operand fragments straight from device memory (device_dot_operands.h): every operand a
  // load with an affine address; nothing left in threadgroup memory to double-buffer, and
  // no scalar operand copies to vectorise.
  void choose_device_staging();

  // ---- vector width and buffering ------------------------------------------------------
  void choose_vector_width();

  void choose_double_buffer();
  // Where the pipelined K loop fits wgmma (pipelined_wgmma_unfit is empty), the strategy
  // becomes WgmmaPipelined; the reason says why or why not.
  void choose_pipelined_wgmma();
  std::string pipelined_wgmma_unfit() const;
  // Otherwise, where several dots or a dot of a computed a (attention's) fit wgmma with a and
  // the accumulator in registers (staged_wgmma_unfit is empty), the strategy becomes
  // WgmmaStaged: mma.sync would exchange each dot's result through shared memory.
  void choose_staged_wgmma();
  std::string staged_wgmma_unfit() const;

  std::string facilities() const;

  const AsyncGemm* gemm_;
  const ir::Kernel& k_;
  const target::Target& target_;
  const lower::ThreadPlan& lanes_;
  const Schedule asked_;
  const std::vector<const ir::Op*> matrix_ops_;
  const std::vector<const ir::Op*> dots_;  // of 2-D tiles: the rest hold fragments
  const size_t descriptor_gemms_;          // descriptor_matmul ops (form_descriptor_matmul)
  SchedulePlan plan_;
};

}  // namespace metile::schedule::planning
