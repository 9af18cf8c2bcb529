// plan_schedule's geometry: the lanes of a kernel without matrix work, the SIMD-group tiling of
// the dots, the tensor backend's SIMD groups, and the legacy NUM_SG / WM / WN checks.
#include "metile/schedule/planner.h"

namespace metile::schedule::planning {

void Planner::choose_lane_geometry() {
  const int threads = lanes_.threads_per_threadgroup;
  const int groups = threads / target_.simd_width;
  plan_.threads_per_threadgroup = threads;
  plan_.num_simdgroups = groups;
  plan_.geometry_reason = "the traced lane geometry: " + text(threads) +
                          " threads per threadgroup, " + text(groups) + " SIMD groups of " +
                          text(target_.simd_width) + " (" + lanes_.reason + ")";
  if (asked_.num_simdgroups && *asked_.num_simdgroups != groups)
    reject("num_simdgroups", (plan_.backend == Backend::Elementwise
                                  ? std::string("an elementwise")
                                  : "a " + std::string(backend_name(plan_.backend))) +
                                 " kernel runs on its traced lane geometry, " + text(threads) +
                                 " threads per threadgroup = " + text(groups) + " SIMD groups of " +
                                 text(target_.simd_width) + "; declare num_threads=" +
                                 text(*asked_.num_simdgroups * target_.simd_width) +
                                 " on the kernel, or omit num_simdgroups");
  if (asked_.num_simdgroups) plan_.geometry_reason = "required and " + plan_.geometry_reason;
}

void Planner::choose_matrix_tiling() {
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

void Planner::choose_tensor_geometry() {
  if (lanes_.threads_per_threadgroup % target_.simd_width)
    reject(asked_.num_simdgroups ? "num_simdgroups" : "backend",
           text(lanes_.threads_per_threadgroup) +
               " threads are no whole number of SIMD groups "
               "for execution_simdgroups");
  plan_.geometry_reason += "; matmul2d spreads the output tile over execution_simdgroups<" +
                           text(plan_.num_simdgroups) + "> itself (lane map opaque)";
}

std::optional<std::pair<int, int>> Planner::simdgroup_grid(int64_t groups, int64_t rows,
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

bool Planner::simdgroup_fits() const {
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

std::optional<int64_t> Planner::attr(const char* name) const {
  const auto it = k_.attrs.find(name);
  if (it == k_.attrs.end()) return std::nullopt;
  const int64_t* v = std::get_if<int64_t>(&it->second);
  return v ? std::optional<int64_t>(*v) : std::nullopt;
}

void Planner::check_legacy_geometry() const {
  const auto legacy_error = [&](const std::string& what) {
    throw UserError(
        "plan_schedule: kernel '" + k_.name + "': " + what +
        " disagrees with the selected geometry of " + text(plan_.num_simdgroups) + " SIMD groups" +
        (asked_.num_simdgroups ? " (Schedule(num_simdgroups=" + text(*asked_.num_simdgroups) + "))"
                               : std::string()));
  };
  if (const auto num_sg = attr("NUM_SG"); num_sg && *num_sg != plan_.num_simdgroups)
    legacy_error("NUM_SG=" + text(*num_sg));
  const auto wm = attr("WM"), wn = attr("WN");
  if (wm && wn && *wm * *wn != plan_.num_simdgroups)
    legacy_error("WM=" + text(*wm) + " x WN=" + text(*wn));
}

}  // namespace metile::schedule::planning
