// FusionPlan::explain: the plan as a JSON report.
#include <nlohmann/json.hpp>

#include "metile/graph/fusion/fusion_plan.h"

namespace metile::graph {

namespace {
using Json = nlohmann::ordered_json;

Json labels(const std::vector<std::string>& table, const std::vector<int>& ids) {
  Json list = Json::array();
  for (int i : ids) list.push_back(table[i]);
  return list;
}
}  // namespace

std::string FusionPlan::explain() const {
  Json report;
  report["target"] = target;
  report["summary"] = {
      {"ops", op_labels.size()},
      {"kernels", regions.size()},
      {"fused_regions", std::count_if(regions.begin(), regions.end(),
                                      [](const FusedRegion& r) { return r.candidate >= 0; })},
      {"launches_saved", launches_saved()},
      {"bytes_saved", bytes_saved()}};
  Json& region_list = report["regions"] = Json::array();
  for (const FusedRegion& r : regions) {
    region_list.push_back({{"id", r.id},
                           {"ops", r.ops},
                           {"op_ids", r.op_ids},
                           {"inputs", labels(value_names, r.inputs)},
                           {"outputs", labels(value_names, r.outputs)},
                           {"bytes_saved", r.bytes_saved},
                           {"launches_saved", r.launches_saved},
                           {"benefit_ns", r.benefit_ns},
                           {"candidate", r.candidate}});
  }
  Json& candidate_list = report["candidates"] = Json::array();
  Json rejected_list = Json::array();
  for (const CandidateRegion& c : candidates) {
    Json excluded = Json::array();
    for (const auto& [op, why] : c.excluded)
      excluded.push_back({{"op", op_labels[op]}, {"reason", why}});
    bool selected = candidate_reasons[c.id].empty();
    candidate_list.push_back({{"id", c.id},
                              {"anchor", op_labels[c.anchor]},
                              {"ops", labels(op_labels, c.ops)},
                              {"benefit_ns", c.benefit_ns},
                              {"bytes_saved", c.bytes_saved},
                              {"launches_saved", c.launches_saved},
                              {"registers", c.resources.registers},
                              {"threadgroup_bytes", c.resources.threadgroup_bytes},
                              {"network",
                               {{"vertices", c.network_vertices},
                                {"arcs", c.network_arcs},
                                {"min_cut_ns", c.min_cut_ns},
                                {"solver", c.solver},
                                {"solves", c.solves}}},
                              {"excluded", excluded},
                              {"selected", selected}});
    if (!selected)
      rejected_list.push_back({{"stage", "selection"},
                               {"candidate", c.id},
                               {"ops", labels(op_labels, c.ops)},
                               {"reason", candidate_reasons[c.id]}});
  }
  Json& component_list = report["components"] = Json::array();
  for (const ConflictComponent& comp : components)
    component_list.push_back({{"candidates", comp.candidates},
                              {"path", selection_path_name(comp.path)},
                              {"selected", comp.selected},
                              {"selected_benefit_ns", comp.selected_benefit}});
  for (const RejectedRegion& r : rejected)
    rejected_list.push_back({{"stage", "neighbourhood"},
                             {"anchor", op_labels[r.anchor]},
                             {"ops", labels(op_labels, r.ops)},
                             {"reason", r.reason}});
  report["rejected"] = rejected_list;
  return report.dump(2);
}

}  // namespace metile::graph
