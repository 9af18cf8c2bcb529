#include "metile/schedule/schedule_plan.h"

#include "metile/support/errors.h"

namespace metile::schedule {

std::string_view matrix_strategy_name(MatrixStrategy s) {
  switch (s) {
    case MatrixStrategy::None:
      return "none";
    case MatrixStrategy::SimdgroupMatrix:
      return "simdgroup_matrix";
    case MatrixStrategy::MmaSync:
      return "mma_sync";
    case MatrixStrategy::MppMatmul2d:
      return "mpp_matmul2d";
    case MatrixStrategy::WgmmaTma:
      return "wgmma_tma";
    case MatrixStrategy::WgmmaPipelined:
      return "wgmma_pipelined";
    case MatrixStrategy::WgmmaStaged:
      return "wgmma_staged";
  }
  throw InternalError("matrix_strategy_name: unknown strategy");
}

nlohmann::json SchedulePlan::to_json() const {
  nlohmann::json j;
  j["backend"] = {{"value", backend_name(backend)},
                  {"strategy", matrix_strategy_name(strategy)},
                  {"reason", backend_reason}};
  j["geometry"] = {{"num_simdgroups", num_simdgroups},
                   {"simd_width", simd_width},
                   {"threads_per_threadgroup", threads_per_threadgroup},
                   {"simdgroups_m", simdgroups_m},
                   {"simdgroups_n", simdgroups_n},
                   {"reason", geometry_reason}};
  j["staging"] = {{"value", staging_name(staging)}, {"reason", staging_reason}};
  j["vector_width"] = {
      {"value", vector_width == 0 ? nlohmann::json("auto") : nlohmann::json(vector_width)},
      {"reason", vector_width_reason}};
  j["double_buffer"] = {
      {"value", double_buffer ? nlohmann::json(*double_buffer) : nlohmann::json("auto")},
      {"pipeline_stages", pipeline_stages},
      {"reason", double_buffer_reason}};
  j["requested"] = requested ? requested->to_json() : nlohmann::json();
  if (async_gemm) j["async_gemm"] = async_gemm->to_json();
  return j;
}

nlohmann::json AsyncGemm::to_json() const {
  if (!matched()) return {{"matched", false}, {"reason", not_matched}};
  return {{"matched", true},
          {"dtype", ir::dtype_name(dtype)},
          {"tile", {block_m, block_n, block_k}},
          {"stages", stages},
          {"consumer_warp_groups", consumers},
          {"producer_warp_groups", 1},
          {"group_m", group_m},
          {"ring_bytes", ring_bytes}};
}

}  // namespace metile::schedule
