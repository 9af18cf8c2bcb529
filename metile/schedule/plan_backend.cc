// plan_schedule's backend and matrix strategy, and the wgmma_tma strategy's pipeline
// (docs/hopper.md).
#include "metile/schedule/planner.h"

namespace metile::schedule::planning {

void Planner::choose_backend() {
  if (asked_.backend == Backend::Nax)
    reject<NotSupported>(
        "backend", "no meTile target has Apple's neural accelerator (NAX); target " + target_.name +
                       " offers " + facilities());
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
  if (fragment_ops && asked_.backend != Backend::Auto && asked_.backend != Backend::SimdgroupInline)
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
                               " form the canonical descriptor GEMM, which target " + target_.name +
                               "'s tensor backend lowers";
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

void Planner::choose_strategy() {
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
      plan_.backend_reason += std::string(" (") +
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
      reject<NotSupported>("backend", "target " + target_.name + " has no tensor ops (it offers " +
                                          facilities() + ")");
  }
}

std::string Planner::wgmma_unfit() const {
  if (!target_.matrix_facilities.has(target::MatrixFacility::Wgmma) || !target_.has_tma ||
      !target_.has_mbarrier || !target_.has_setmaxnreg)
    return "target " + target_.name + " lacks wgmma, TMA, mbarriers or setmaxnreg";
  if (!gemm_) return "the kernel was not matched against the canonical descriptor GEMM";
  if (!gemm_->matched())
    return "the kernel is not the canonical descriptor GEMM (" + gemm_->not_matched + ")";
  if (!gemm_->wgmma_tile())
    return "its tile is " + text(gemm_->block_m) + "x" + text(gemm_->block_n) + "x" +
           text(gemm_->block_k) +
           " (BLOCK_M x BLOCK_N x BLOCK_K); wgmma_tma takes 128 x 64, 128 or 256 x 64: two "
           "consumer warp groups of 64 rows and 128-byte swizzled K rows";
  return tma_misaligned();
}

// TMA's rule: each operand's base address and row stride are multiples of 16 bytes. Where the
// launch checked every argument's divisibility (kernel attribute divisibility_checked: the
// Python specialisation), an operand without that fact breaks it, and the kernel takes the
// next strategy rather than failing at launch; elsewhere the launch checks it.
std::string Planner::tma_misaligned() const {
  if (!k_.attrs.count("divisibility_checked")) return "";
  const int64_t element = ir::dtype_bytes(gemm_->dtype);
  const auto stride_aligned = [&](const Extent& e) {
    const int64_t d =
        e.param >= 0 ? k_.params[static_cast<size_t>(e.param)].divisibility : (e.value & -e.value);
    return d * element % 16 == 0;
  };
  const struct {
    int buffer;
    const Extent& row;
    const char* name;
  } operands[] = {{gemm_->left, gemm_->inner, "left"}, {gemm_->right, gemm_->columns, "right"}};
  for (const auto& o : operands) {
    const ir::Param& p = k_.params[static_cast<size_t>(o.buffer)];
    if (p.divisibility < 16 || !stride_aligned(o.row))
      return std::string("the ") + o.name + " operand '" + p.name +
             "' has an address or a row stride that is no multiple of 16 bytes (TMA's rule)";
  }
  return "";
}

void Planner::choose_wgmma_pipeline() {
  AsyncGemm g = *gemm_;
  g.consumers = static_cast<int>(g.block_m / 64);
  const int64_t stage = (g.block_m * g.block_k + g.block_k * g.block_n) * ir::dtype_bytes(g.dtype);
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

std::string Planner::facilities() const {
  std::string names;
  for (target::MatrixFacility f :
       {target::MatrixFacility::SimdgroupMatrix8x8, target::MatrixFacility::AppleTensorOps,
        target::MatrixFacility::MmaSync, target::MatrixFacility::Wgmma})
    if (target_.matrix_facilities.has(f))
      names += (names.empty() ? "" : ", ") + std::string(target::matrix_facility_name(f));
  return names.empty() ? "no matrix facility" : names;
}

}  // namespace metile::schedule::planning
