#include "metile/schedule/execution_report.h"

#include <map>

namespace metile::schedule {

nlohmann::json ExecutionReport::to_json() const {
  nlohmann::json j;
  j["kernel"] = kernel;
  j["target"] = target;
  j["geometry"] = {{"threads_per_threadgroup", threads_per_threadgroup},
                   {"grid_rule", grid_rule},
                   {"reason", thread_plan_reason},
                   {"ownership", ownership}};
  j["threadgroup_bytes"] = threadgroup_bytes;
  j["allocations"] = nlohmann::json::array();
  for (const AllocationRecord& a : allocations)
    j["allocations"].push_back({{"purpose", a.purpose},
                                {"offset", a.offset},
                                {"bytes", a.bytes},
                                {"dtype", a.dtype},
                                {"elements", a.elements}});
  j["passes"] = nlohmann::json::array();
  for (const PassRecord& p : passes)
    j["passes"].push_back(
        {{"name", p.name}, {"dialect", p.dialect}, {"changed", p.changed}, {"ms", p.milliseconds}});
  j["loops"] = nlohmann::json::array();
  for (const LoopRecord& l : loops)
    j["loops"].push_back({{"loop", l.loop},
                          {"tile_elements", l.tile_elements},
                          {"elements_per_thread", l.elements_per_thread}});
  j["value_layouts"] = value_layouts;
  j["register_reductions"] = nlohmann::json::array();
  for (const RegisterReductionRecord& r : register_reductions)
    j["register_reductions"].push_back({{"operation", r.operation},
                                        {"dtype", r.dtype},
                                        {"threads", r.threads},
                                        {"registers", r.registers},
                                        {"scratch", r.scratch}});
  nlohmann::json rewrites = nlohmann::json::array();
  std::map<std::string, int> counts{{"identity", 0}, {"inverse pair", 0}, {"chain", 0}};
  for (const LayoutOptimizationRecord& o : layout_optimizations) {
    rewrites.push_back({{"rule", o.rule}, {"conversion", o.conversion}, {"proof", o.proof}});
    ++counts[o.rule];
  }
  j["layout_optimizations"] = {{"identities_removed", counts["identity"]},
                               {"inverse_pairs_cancelled", counts["inverse pair"]},
                               {"chains_composed", counts["chain"]},
                               {"rewrites", rewrites}};
  j["layout_conversions"] = nlohmann::json::array();
  for (const LayoutConversionRecord& c : layout_conversions)
    j["layout_conversions"].push_back(
        {{"conversion", c.conversion}, {"mechanism", c.mechanism}, {"scratch", c.scratch}});
  j["schedule_plan"] = schedule_plan.to_json();
  j["matrix_lane_map"] =
      schedule_plan.matrix() ? "opaque" : "none: the kernel has no matrix fragments";
  j["buffering"] = nlohmann::json::array();
  for (const BufferingRecord& b : buffering)
    j["buffering"].push_back(
        {{"loop", b.loop}, {"allocation", b.allocation}, {"stages", b.stages}, {"bytes", b.bytes}});
  j["pipelines"] = nlohmann::json::array();
  for (const SoftwarePipeline& p : pipelines) j["pipelines"].push_back(p.to_json());
  j["fused_epilogues"] = nlohmann::json::array();
  for (const FusedEpilogueRecord& e : fused_epilogues)
    j["fused_epilogues"].push_back({{"store", e.store},
                                    {"ops", e.ops},
                                    {"scalar_parameters", e.scalar_parameters},
                                    {"output_conversion", e.output_conversion},
                                    {"backend", e.backend}});
  j["discoveries"] = nlohmann::json::array();
  for (const DiscoveryRecord& d : discoveries) {
    nlohmann::json record = {
        {"rewrite", d.rewrite}, {"where", d.where}, {"applied", d.applied}, {"law", d.law}};
    if (d.applied)
      record["certificate"] = {{"obligations", d.obligations}, {"cases_checked", d.cases_checked}};
    record[d.applied ? "result" : "reason"] = d.detail;
    j["discoveries"].push_back(std::move(record));
  }
  j["peeled_loops"] = nlohmann::json::array();
  for (const PeeledLoopRecord& p : peeled_loops)
    j["peeled_loops"].push_back(
        {{"loop", p.loop}, {"device_tiles", p.device_tiles}, {"complete_when", p.condition}});
  j["pipelining"] = {{"requested_stages", pipelining.requested_stages
                                              ? nlohmann::json(*pipelining.requested_stages)
                                              : nlohmann::json()},
                     {"prefetched_loops", pipelining.prefetched_loops},
                     {"reason", pipelining.reason}};
  j["grouped_loads"] = grouped_loads;
  j["grouped_stores"] = grouped_stores;
  j["grouped_copies"] = grouped_copies;
  j["math_mode"] = math_mode;
  j["source_bytes"] = source_bytes;
  return j;
}

}  // namespace metile::schedule
