#include "metile/schedule/plan_schedule.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "metile/lower/device_dot_operands.h"
#include "metile/lower/threadgroup_allocator.h"
#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::schedule {

namespace {

// The kernel's matrix work, in program order: every dot, and every op that takes or makes an
// 8x8 fragment (the types say so, whatever the op).
std::vector<const ir::Op*> matrix_ops(const ir::Kernel& k) {
  const auto is_fragment = [&](ir::ValueId v) { return k.type(v).is_matrix(); };
  std::vector<const ir::Op*> found;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Dot || op.kind == ir::OpKind::DescriptorMatmul ||
        std::any_of(op.operands.begin(), op.operands.end(), is_fragment) ||
        std::any_of(op.results.begin(), op.results.end(), is_fragment))
      found.push_back(&op);
  });
  return found;
}

// The dots of distributed 2-D tiles, which the simdgroup and tensor backends tile over their
// SIMD groups; the other matrix ops hold 8x8 fragments, which only simdgroup_inline lowers.
std::vector<const ir::Op*> tile_dots(const ir::Kernel& k, const std::vector<const ir::Op*>& ops) {
  std::vector<const ir::Op*> dots;
  for (const ir::Op* op : ops)
    if (op->kind == ir::OpKind::Dot && k.type(op->operands[0]).is_tile()) dots.push_back(op);
  return dots;
}

std::string show(const Schedule& s, const std::string& control) {
  if (control == "backend") return "backend='" + std::string(backend_name(s.backend)) + "'";
  if (control == "staging") return "staging='" + std::string(staging_name(s.staging)) + "'";
  if (control == "num_simdgroups") return "num_simdgroups=" + std::to_string(*s.num_simdgroups);
  if (control == "vector_width") return "vector_width=" + std::to_string(*s.vector_width);
  return std::string("double_buffer=") + (*s.double_buffer ? "True" : "False");
}

std::string text(int64_t v) {
  return std::to_string(v);
}

// The matrix tile side of the SIMD-group matrix facilities (8x8 simdgroup_matrix; mma.sync
// tiles are multiples of it).
constexpr int64_t kMatrixTile = 8;

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

  SchedulePlan run() {
    if (plan_.requested) check_schedule(asked_);
    choose_backend();
    if (plan_.strategy == MatrixStrategy::WgmmaTma) {
      choose_wgmma_pipeline();
      return std::move(plan_);
    }
    if (plan_.backend == Backend::Simdgroup || plan_.backend == Backend::TensorOps)
      choose_matrix_tiling();
    else
      choose_lane_geometry();
    check_legacy_geometry();
    choose_staging();
    choose_vector_width();
    choose_double_buffer();
    return std::move(plan_);
  }

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
  void choose_backend() {
    if (asked_.backend == Backend::Nax)
      reject<NotSupported>("backend",
                           "no meTile target has Apple's neural accelerator (NAX); target " +
                               target_.name + " offers " + facilities());
    const std::string required = asked_.backend == Backend::Auto ? "auto" : "required";
    if (matrix_ops_.empty()) {
      if (asked_.backend != Backend::Auto && asked_.backend != Backend::Elementwise)
        reject("backend",
               "the kernel has no matrix work (no metile.dot, no matrix fragments) for a "
               "matrix backend to lower; omit backend or use backend='elementwise'");
      plan_.backend = Backend::Elementwise;
      plan_.backend_reason = required +
                             ": the kernel has no matrix work (no metile.dot, no matrix "
                             "fragments), so its tiles are lowered elementwise to per-thread "
                             "registers";
      return;
    }
    const size_t fragment_ops = matrix_ops_.size() - dots_.size() - descriptor_gemms_;
    const std::string work =
        fragment_ops
            ? "the kernel's " + text(static_cast<int64_t>(fragment_ops)) + " matrix fragment op(s)"
        : descriptor_gemms_
            ? std::string("the kernel's descriptor GEMM (descriptor_matmul)")
            : "the kernel's " + text(static_cast<int64_t>(dots_.size())) + " dot op(s)";
    if (fragment_ops && asked_.backend != Backend::Auto &&
        asked_.backend != Backend::SimdgroupInline)
      reject("backend", work + " are lowered by backend='simdgroup_inline' only");
    switch (asked_.backend) {
      case Backend::Auto:
        if (fragment_ops) {
          // Seed 002: fragments are the explicit simdgroup_inline schedule's; lowering names
          // the missing SCHEDULE with this reason.
          plan_.backend = Backend::Elementwise;
          plan_.backend_reason = "auto: " + work +
                                 " need backend='simdgroup_inline', which a kernel asks for "
                                 "explicitly";
        } else if (descriptor_gemms_) {
          // form_descriptor_matmul formed it because nothing asked for the SIMD-group path.
          plan_.backend = Backend::TensorOps;
          plan_.backend_reason =
              "auto: " + work +
              " reads its operands from device memory on the target's tensor backend (an "
              "explicit vector_width, double_buffer=True or staging='threadgroup' selects the "
              "SIMD-group path instead)";
        } else if (asked_.vector_width || asked_.double_buffer == true) {
          plan_.backend = Backend::Simdgroup;
          plan_.backend_reason =
              "auto with an explicit vector_width or double_buffer=True: the controllable "
              "SIMD-group path (the opaque tensor backend cannot honour them) for " +
              work;
        } else if (wgmma_unfit().empty()) {
          plan_.backend = Backend::TensorOps;
          plan_.backend_reason = "auto: " + work +
                                 " form the canonical descriptor GEMM, which target " +
                                 target_.name + "'s tensor backend lowers";
        } else if (simdgroup_fits()) {
          plan_.backend = Backend::Simdgroup;
          plan_.backend_reason =
              "auto: the SIMD groups tile the output of " + work + " in 8x8 matrix fragments";
        } else {
          plan_.backend = Backend::Elementwise;
          plan_.backend_reason =
              "auto: " + work +
              " are lowered generically (operands through one threadgroup exchange, FP32 "
              "multiply-adds per thread): no SIMD-group matrices tile every dot's output on "
              "target " +
              target_.name;
        }
        break;
      case Backend::Elementwise:
        plan_.backend = Backend::Elementwise;
        plan_.backend_reason = "required: " + work +
                               " are lowered generically (FP32 "
                               "multiply-adds per thread, no matrix unit)";
        break;
      case Backend::Simdgroup:
      case Backend::SimdgroupInline:
        plan_.backend = asked_.backend;
        plan_.backend_reason = "required: " + work + " on SIMD-group matrices";
        break;
      case Backend::TensorOps:
        plan_.backend = Backend::TensorOps;
        plan_.backend_reason = "required: " + work + " on the target's tensor backend";
        break;
      case Backend::Nax:
        throw InternalError("plan_schedule: nax is rejected above");
    }
    if (asked_.backend == Backend::Auto && plan_.backend != Backend::TensorOps &&
        target_.matrix_facilities.has(target::MatrixFacility::Wgmma))
      plan_.backend_reason += "; wgmma_tma not chosen: " + wgmma_unfit();
    choose_strategy();
  }

  // How the target implements a matrix backend; a facility it lacks is NotSupported.
  void choose_strategy() {
    const target::MatrixFacilities& has = target_.matrix_facilities;
    switch (plan_.backend) {
      case Backend::Auto:
      case Backend::Nax:
        throw InternalError("plan_schedule: the plan holds no auto or nax backend");
      case Backend::Elementwise:
        plan_.strategy = MatrixStrategy::None;
        return;
      case Backend::Simdgroup:
      case Backend::SimdgroupInline:
        if (has.has(target::MatrixFacility::SimdgroupMatrix8x8))
          plan_.strategy = MatrixStrategy::SimdgroupMatrix;
        else if (has.has(target::MatrixFacility::MmaSync))
          plan_.strategy = MatrixStrategy::MmaSync;
        else
          reject<NotSupported>("backend", "target " + target_.name +
                                              " has no SIMD-group matrix facility (it offers " +
                                              facilities() + ")");
        plan_.backend_reason +=
            std::string(" (") +
            (plan_.strategy == MatrixStrategy::MmaSync ? "mma.sync warp fragments"
                                                       : "simdgroup_matrix 8x8") +
            " on target " + target_.name + ")";
        return;
      case Backend::TensorOps:
        if (has.has(target::MatrixFacility::AppleTensorOps)) {
          plan_.strategy = MatrixStrategy::MppMatmul2d;
          plan_.backend_reason += " (Metal 4 matmul2d on target " + target_.name + ")";
          return;
        }
        if (has.has(target::MatrixFacility::Wgmma)) {
          if (const std::string why = wgmma_unfit(); !why.empty())
            reject<NotSupported>("backend", "target " + target_.name +
                                                "'s tensor backend (wgmma_tma) cannot lower it: " +
                                                why + "; use backend='simdgroup' (mma.sync)");
          plan_.strategy = MatrixStrategy::WgmmaTma;
          plan_.backend_reason +=
              " (wgmma_tma: TMA loads into an mbarrier ring, wgmma, "
              "producer/consumer warp groups, persistent tiles, on target " +
              target_.name + ")";
          return;
        }
        reject<NotSupported>("backend", "target " + target_.name +
                                            " has no tensor ops (it offers " + facilities() + ")");
    }
  }

  // ---- the wgmma_tma strategy (docs/hopper.md) ------------------------------------------
  // Why the kernel cannot take target's wgmma_tma strategy; empty when it can.
  std::string wgmma_unfit() const {
    if (!target_.matrix_facilities.has(target::MatrixFacility::Wgmma) || !target_.has_tma ||
        !target_.has_mbarrier || !target_.has_setmaxnreg)
      return "target " + target_.name + " lacks wgmma, TMA, mbarriers or setmaxnreg";
    if (!gemm_) return "the kernel was not matched against the canonical descriptor GEMM";
    if (!gemm_->matched())
      return "the kernel is not the canonical descriptor GEMM (" + gemm_->not_matched + ")";
    if (gemm_->block_m != 128 || gemm_->block_k != 64 ||
        (gemm_->block_n != 64 && gemm_->block_n != 128 && gemm_->block_n != 256))
      return "its tile is " + text(gemm_->block_m) + "x" + text(gemm_->block_n) + "x" +
             text(gemm_->block_k) +
             " (BLOCK_M x BLOCK_N x BLOCK_K); wgmma_tma takes 128 x 64, 128 or 256 x 64: two "
             "consumer warp groups of 64 rows and 128-byte swizzled K rows";
    return "";
  }

  // The restricted schedule: the ring, the warp groups and the tile order are fixed, so the
  // controls that would change them are rejected by name.
  void choose_wgmma_pipeline() {
    AsyncGemm g = *gemm_;
    g.consumers = static_cast<int>(g.block_m / 64);
    const int64_t stage =
        (g.block_m * g.block_k + g.block_k * g.block_n) * ir::dtype_bytes(g.dtype);
    g.stages =
        static_cast<int>(std::min<int64_t>(5, (target_.threadgroup_memory_bytes - 1024) / stage));
    g.ring_bytes = g.stages * stage + 16 * g.stages;
    const int groups = (g.consumers + 1) * 4;
    plan_.num_simdgroups = groups;
    plan_.threads_per_threadgroup = groups * target_.simd_width;
    plan_.simdgroups_m = g.consumers;
    plan_.simdgroups_n = 1;
    plan_.geometry_reason = "wgmma_tma: " + text(g.consumers) +
                            " consumer warp groups (64 rows of the tile each, wgmma m64n" +
                            text(g.block_n) + "k16) and one producer warp group issuing TMA, " +
                            text(plan_.threads_per_threadgroup) + " threads";
    if (asked_.num_simdgroups && *asked_.num_simdgroups != groups)
      reject("num_simdgroups", "a wgmma_tma kernel runs " + text(groups) +
                                   " SIMD groups (its warp groups), not " +
                                   text(*asked_.num_simdgroups));
    if (asked_.staging != Staging::Auto)
      reject("staging", "the wgmma_tma strategy stages its operands itself, by TMA into a " +
                            text(g.stages) + "-stage shared-memory ring");
    plan_.staging = Staging::Threadgroup;
    plan_.staging_reason = "auto: TMA into a " + text(g.stages) + "-stage ring of " +
                           text(g.ring_bytes) + " bytes of shared memory";
    if (asked_.vector_width)
      reject("vector_width", "the wgmma_tma strategy's copies are TMA boxes, not vectors");
    plan_.vector_width = 0;
    plan_.vector_width_reason =
        "auto: TMA copies whole tiles; the epilogue's stores are grouped "
        "where proven consecutive";
    if (asked_.double_buffer == false)
      reject("double_buffer", "the wgmma_tma strategy always buffers its K loop in a " +
                                  text(g.stages) + "-stage ring");
    plan_.double_buffer = true;
    plan_.double_buffer_reason = "auto: an asynchronous " + text(g.stages) +
                                 "-stage mbarrier ring (full/empty barriers per stage)";
    plan_.async_gemm = g;
  }

  // ---- geometry ------------------------------------------------------------------------
  // Elementwise and simdgroup_inline kernels run on the lanes they were traced with.
  void choose_lane_geometry() {
    const int threads = lanes_.threads_per_threadgroup;
    const int groups = threads / target_.simd_width;
    plan_.threads_per_threadgroup = threads;
    plan_.num_simdgroups = groups;
    plan_.geometry_reason = "the traced lane geometry: " + text(threads) +
                            " threads per threadgroup, " + text(groups) + " SIMD groups of " +
                            text(target_.simd_width) + " (" + lanes_.reason + ")";
    if (asked_.num_simdgroups && *asked_.num_simdgroups != groups)
      reject("num_simdgroups",
             (plan_.backend == Backend::Elementwise
                  ? std::string("an elementwise")
                  : "a " + std::string(backend_name(plan_.backend))) +
                 " kernel runs on its traced lane geometry, " + text(threads) +
                 " threads per threadgroup = " + text(groups) + " SIMD groups of " +
                 text(target_.simd_width) +
                 "; declare num_threads=" + text(*asked_.num_simdgroups * target_.simd_width) +
                 " on the kernel, or omit num_simdgroups");
    if (asked_.num_simdgroups) plan_.geometry_reason = "required and " + plan_.geometry_reason;
  }

  // Simdgroup and tensor_ops run on the traced lanes and tile each dot's [M, N] output over
  // their SIMD groups as WM x WN, whole 8x8 fragments per group (lower_dot_simdgroup's
  // rule); the plan reports the first dot's grid.
  void choose_matrix_tiling() {
    choose_lane_geometry();
    if (descriptor_gemms_) return choose_tensor_geometry();
    std::optional<std::pair<int, int>> first;
    for (const ir::Op* dot : dots_) {
      const ir::Type& acc = k_.type(dot->operands[2]);
      const auto grid = simdgroup_grid(plan_.num_simdgroups, acc.shape[0], acc.shape[1]);
      if (!grid)
        reject(asked_.num_simdgroups ? "num_simdgroups" : "backend",
               text(plan_.num_simdgroups) + " SIMD groups do not tile the dot's [" +
                   text(acc.shape[0]) + ", " + text(acc.shape[1]) + "] output in whole " +
                   text(kMatrixTile) + "x" + text(kMatrixTile) +
                   " fragments (WM x WN, powers of two, M % (8 WM) == 0 and N % (8 WN) == 0)");
      if (!first) first = grid;
    }
    plan_.simdgroups_m = first->first;
    plan_.simdgroups_n = first->second;
    plan_.geometry_reason +=
        "; the first dot's output in 8x8 fragments over WM=" + text(first->first) +
        " x WN=" + text(first->second) + " SIMD groups";
  }

  // Metal 4's matmul2d spreads the output tile over execution_simdgroups<N> itself: the
  // compiler places nothing, so the grid is 1 x 1 and the lanes must be whole SIMD groups.
  void choose_tensor_geometry() {
    if (lanes_.threads_per_threadgroup % target_.simd_width)
      reject(asked_.num_simdgroups ? "num_simdgroups" : "backend",
             text(lanes_.threads_per_threadgroup) +
                 " threads are no whole number of SIMD groups "
                 "for execution_simdgroups");
    plan_.geometry_reason += "; matmul2d spreads the output tile over execution_simdgroups<" +
                             text(plan_.num_simdgroups) + "> itself (lane map opaque)";
  }

  // WM x WN == groups (powers of two) with whole 8x8 fragments per SIMD group, the squarest
  // per-group block first; nullopt when none fits or the lanes are no whole SIMD groups.
  std::optional<std::pair<int, int>> simdgroup_grid(int64_t groups, int64_t rows,
                                                    int64_t columns) const {
    if (groups < 1 || lanes_.threads_per_threadgroup % target_.simd_width) return std::nullopt;
    const int64_t m_blocks = rows / kMatrixTile, n_blocks = columns / kMatrixTile;
    std::optional<std::pair<int, int>> best;
    int best_skew = 0;
    for (int64_t wm = 1; wm <= groups; wm *= 2) {
      const int64_t wn = groups / wm;
      if (m_blocks == 0 || n_blocks == 0 || m_blocks % wm || n_blocks % wn) continue;
      const int skew = std::abs(log2_exact(m_blocks / wm) - log2_exact(n_blocks / wn));
      if (!best || skew < best_skew) {
        best = std::pair(static_cast<int>(wm), static_cast<int>(wn));
        best_skew = skew;
      }
    }
    return best;
  }

  // Whether the target has SIMD-group matrices and the traced lanes tile every dot.
  bool simdgroup_fits() const {
    const target::MatrixFacilities& has = target_.matrix_facilities;
    if (!has.has(target::MatrixFacility::SimdgroupMatrix8x8) &&
        !has.has(target::MatrixFacility::MmaSync))
      return false;
    const int64_t groups = lanes_.threads_per_threadgroup / target_.simd_width;
    for (const ir::Op* dot : dots_) {
      const ir::Type& acc = k_.type(dot->operands[2]);
      if (!simdgroup_grid(groups, acc.shape[0], acc.shape[1])) return false;
    }
    return true;
  }

  std::optional<int64_t> attr(const char* name) const {
    const auto it = k_.attrs.find(name);
    if (it == k_.attrs.end()) return std::nullopt;
    const int64_t* v = std::get_if<int64_t>(&it->second);
    return v ? std::optional<int64_t>(*v) : std::nullopt;
  }

  // NUM_SG, WM and WN constexprs of GEMM kernels written before Schedule: they must agree
  // with the geometry (and so with any Schedule requirement, which the geometry meets).
  void check_legacy_geometry() const {
    const auto legacy_error = [&](const std::string& what) {
      throw UserError("plan_schedule: kernel '" + k_.name + "': " + what +
                      " disagrees with the selected geometry of " + text(plan_.num_simdgroups) +
                      " SIMD groups" +
                      (asked_.num_simdgroups
                           ? " (Schedule(num_simdgroups=" + text(*asked_.num_simdgroups) + "))"
                           : std::string()));
    };
    if (const auto num_sg = attr("NUM_SG"); num_sg && *num_sg != plan_.num_simdgroups)
      legacy_error("NUM_SG=" + text(*num_sg));
    const auto wm = attr("WM"), wn = attr("WN");
    if (wm && wn && *wm * *wn != plan_.num_simdgroups)
      legacy_error("WM=" + text(*wm) + " x WN=" + text(*wn));
  }

  // ---- staging -------------------------------------------------------------------------
  void choose_staging() {
    if (whole_tile()) return choose_matrix_staging();
    const int64_t declared = lower::ThreadgroupAllocator::user_bytes(k_);
    const Staging own = declared > 0 ? Staging::Threadgroup : Staging::Device;
    plan_.staging = own;
    plan_.staging_reason =
        declared > 0 ? "the kernel stages through the " + text(declared) +
                           " bytes of threadgroup memory it declares (metile.shared)"
                     : "the kernel's memory operations are device loads and stores only (no "
                       "metile.shared)";
    if (asked_.staging == Staging::Auto) return;
    if (asked_.staging != own)
      reject("staging", std::string(plan_.backend == Backend::SimdgroupInline
                                        ? "a simdgroup_inline kernel places its own tiles, so "
                                          "staging"
                                        : "elementwise staging") +
                            " must match the kernel's memory operations, and " +
                            plan_.staging_reason);
    if (declared > target_.threadgroup_memory_bytes)
      reject<OutOfResources>(
          "staging", "its " + text(declared) + " bytes of threadgroup memory exceed target " +
                         target_.name + "'s " + text(target_.threadgroup_memory_bytes));
    plan_.staging_reason = "required, and " + plan_.staging_reason;
  }

  // The operand tiles of every dot, staged once (twice with a double buffer).
  void choose_matrix_staging() {
    int64_t bytes = 0;
    for (const ir::Op* dot : dots_)
      for (int operand : {0, 1}) {
        const ir::Type& t = k_.type(dot->operands[operand]);
        bytes += t.num_elements() * ir::dtype_bytes(t.dtype);
      }
    if (asked_.double_buffer == true) bytes *= 2;
    bytes += lower::ThreadgroupAllocator::user_bytes(k_);
    const bool fits = bytes <= target_.threadgroup_memory_bytes;
    const std::string need = text(bytes) + " bytes of operand tiles" +
                             (asked_.double_buffer == true ? " (double-buffered)" : "") +
                             " against target " + target_.name + "'s " +
                             text(target_.threadgroup_memory_bytes);
    if (plan_.backend == Backend::TensorOps) {
      if (asked_.staging == Staging::Threadgroup)
        reject("staging", "the tensor backend reads its operands from device memory itself");
      plan_.staging = Staging::Device;
      plan_.staging_reason = std::string(asked_.staging == Staging::Auto ? "auto" : "required") +
                             ": the tensor backend reads its operands from device memory";
      return;
    }
    switch (asked_.staging) {
      case Staging::Auto:
        // The SIMD-group lowering built stages operands through threadgroup memory only;
        // lower_to_metal checks the capacity of what it allocates.
        plan_.staging = Staging::Threadgroup;
        plan_.staging_reason = "auto: operand tiles through threadgroup memory, " + need;
        return;
      case Staging::Threadgroup:
        if (!fits) reject<OutOfResources>("staging", "staging needs " + need);
        plan_.staging = Staging::Threadgroup;
        plan_.staging_reason = "required: operand tiles through threadgroup memory, " + need;
        return;
      case Staging::Device:
        choose_device_staging();
        return;
    }
  }

  // Operand fragments straight from device memory (device_dot_operands.h): every operand a
  // load with an affine address; nothing left in threadgroup memory to double-buffer, and
  // no scalar operand copies to vectorise.
  void choose_device_staging() {
    if (asked_.double_buffer == true)
      reject("staging",
             "staging='device' reads each operand fragment straight from device memory, so "
             "there is no threadgroup operand buffer for Schedule(double_buffer=True) to "
             "double-buffer; drop one of the two");
    if (asked_.vector_width == 4)
      reject<NotSupported>(
          "staging",
          "staging='device' reads operand fragments with matrix loads, not the scalar "
          "operand copies that Schedule(vector_width=4) vectorises; use "
          "staging='threadgroup' with vector_width=4, or drop vector_width");
    for (const ir::Op* dot : dots_)
      for (int operand : {0, 1})
        if (const std::string why = lower::device_operand_unfit(k_, *dot, operand); !why.empty())
          reject<NotSupported>("staging",
                               "its operand fragments cannot be read straight from "
                               "device memory: " +
                                   why);
    plan_.staging = Staging::Device;
    plan_.staging_reason =
        "required: each SIMD group reads its operand fragments straight from device memory "
        "(complete blocks by matrix loads, ragged tails through 64 elements of tail scratch "
        "per SIMD group), no threadgroup operand tiles";
  }

  // ---- vector width and buffering ------------------------------------------------------
  void choose_vector_width() {
    if (!asked_.vector_width) {
      plan_.vector_width = 0;
      plan_.vector_width_reason =
          plan_.backend == Backend::TensorOps
              ? "auto: the tensor backend's accesses are opaque"
              : "auto: group_vector_accesses groups four consecutive accesses of a thread "
                "where their addresses are proven consecutive and in bounds";
      return;
    }
    if (plan_.backend == Backend::TensorOps)
      reject("vector_width",
             "the tensor backend's accesses are opaque and cannot satisfy an "
             "explicit width");
    if (*asked_.vector_width == 4 && plan_.backend != Backend::Simdgroup)
      reject<NotSupported>(
          "vector_width",
          "vector_width=4 cannot be forced on " +
              std::string(plan_.backend == Backend::SimdgroupInline ? "a simdgroup_inline"
                                                                    : "an elementwise") +
              " kernel: accesses are grouped only where four consecutive addresses are "
              "proven, so leave vector_width unset (automatic) or set it to 1 (no grouping)");
    plan_.vector_width = *asked_.vector_width;
    plan_.vector_width_reason =
        *asked_.vector_width == 1
            ? "required: no compiler vectorization (every access scalar)"
            : "required: vectorized aligned operand interiors (masked tails may stay scalar)";
  }

  void choose_double_buffer() {
    plan_.double_buffer = asked_.double_buffer;
    if (plan_.backend == Backend::Simdgroup && plan_.staging == Staging::Device) {
      plan_.double_buffer_reason =
          std::string(asked_.double_buffer ? "prohibited" : "auto") +
          ": staging='device' keeps no threadgroup operand buffer, so nothing is double-buffered";
      return;
    }
    if (plan_.backend == Backend::Simdgroup) {
      plan_.double_buffer_reason =
          !asked_.double_buffer   ? "auto: a single operand buffer (a two-stage software "
                                    "pipeline is materialised only when required: shared-memory "
                                    "staging is not assumed faster)"
          : *asked_.double_buffer ? "required: a materialised two-stage software pipeline"
                                  : "prohibited: a single operand buffer";
      return;
    }
    if (asked_.double_buffer == true)
      reject("double_buffer",
             plan_.backend == Backend::Elementwise
                 ? "an elementwise kernel has no software pipeline to double-buffer; a "
                   "materialised double buffer needs a matrix backend (backend='simdgroup')"
                 : "only the simdgroup backend materialises a software double buffer");
    plan_.double_buffer_reason = std::string(asked_.double_buffer ? "prohibited" : "auto") +
                                 ": the " + std::string(backend_name(plan_.backend)) +
                                 " backend has no software pipeline, so nothing is double-buffered";
  }

  std::string facilities() const {
    std::string names;
    for (target::MatrixFacility f :
         {target::MatrixFacility::SimdgroupMatrix8x8, target::MatrixFacility::AppleTensorOps,
          target::MatrixFacility::MmaSync, target::MatrixFacility::Wgmma})
      if (target_.matrix_facilities.has(f))
        names += (names.empty() ? "" : ", ") + std::string(target::matrix_facility_name(f));
    return names.empty() ? "no matrix facility" : names;
  }

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

}  // namespace

SchedulePlan plan_schedule(const ir::Kernel& tile, const target::Target& target,
                           const lower::ThreadPlan& lanes, const std::optional<Schedule>& requested,
                           const AsyncGemm* gemm, const std::string& tensor_backend_declined) {
  SchedulePlan plan = Planner(tile, target, lanes, requested, gemm).run();
  if (!tensor_backend_declined.empty() && plan.backend != Backend::TensorOps)
    plan.backend_reason +=
        "; the tensor backend does not take this kernel: " + tensor_backend_declined;
  return plan;
}

}  // namespace metile::schedule
