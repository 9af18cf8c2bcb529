// FusionPlan::explain: the plan as a JSON report.
#include <algorithm>
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

Json roles(const std::vector<std::string>& op_labels,
           const std::vector<std::pair<std::string, int>>& roles) {
  Json r = Json::object();
  for (const auto& [role, op] : roles) r[role] = op_labels[op];
  return r;
}

Json certificate_json(const discovery::Certificate& c) {
  Json obligations = Json::array();
  for (const discovery::DischargedObligation& d : c.obligations)
    obligations.push_back({{"obligation", discovery::obligation_name(d.obligation)},
                           {"statement", discovery::obligation_statement(d.obligation)},
                           {"method", discovery::proof_method_name(d.method)},
                           {"cases", d.cases},
                           {"detail", d.detail}});
  return {{"law", c.law},
          {"obligations", obligations},
          {"cases", c.cases()},
          {"rtol", c.tolerance.rtol},
          {"atol", c.tolerance.atol}};
}

// The laws that licensed rewrites, each certificate once, and every rewrite applied or kept.
Json discovery_json(const FusionPlan& plan) {
  Json laws = Json::array(), rewrites = Json::array(), kept = Json::array();
  std::vector<std::string> seen;
  for (const AttentionRewrite& rw : plan.rewrites) {
    if (std::find(seen.begin(), seen.end(), rw.certificate.law) == seen.end()) {
      seen.push_back(rw.certificate.law);
      laws.push_back(certificate_json(rw.certificate));
    }
    rewrites.push_back({{"rewrite", "flash_attention"},
                        {"replaced", rw.replaced_labels},
                        {"node", plan.op_labels[rw.node]},
                        {"scale", rw.scale},
                        {"causal", rw.causal},
                        {"law", rw.certificate.law},
                        {"bytes_saved", rw.bytes_saved},
                        {"launches_saved", rw.launches_saved}});
  }
  for (const RejectedRewrite& r : plan.rejected_rewrites)
    kept.push_back({{"rewrite", r.rewrite}, {"ops", r.op_labels}, {"reason", r.reason}});
  return {{"laws", laws}, {"rewrites", rewrites}, {"rejected", kept}};
}
}  // namespace

std::string FusionPlan::explain() const {
  Json report;
  report["target"] = target;
  report["summary"] = {{"ops", op_labels.size()},
                       {"kernels", regions.size()},
                       {"fused_regions", std::count_if(regions.begin(), regions.end(),
                                                       [](const FusedRegion& r) {
                                                         return r.candidate >= 0 || r.rewrite >= 0;
                                                       })},
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
    if (!r.rule.empty()) region_list.back()["rule"] = r.rule;
    if (!r.roles.empty()) {
      region_list.back()["roles"] = roles(op_labels, r.roles);
      region_list.back()["form"] = r.form;
      region_list.back()["schedule"] = r.schedule;
    }
    if (r.rewrite >= 0) region_list.back()["rewrite"] = r.rewrite;
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
    if (!c.rule.empty()) {
      candidate_list.back()["rule"] = c.rule;
      candidate_list.back()["roles"] = roles(op_labels, c.roles);
    }
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
  for (const RejectedRegion& r : rule_rejected)
    rejected_list.push_back({{"stage", "rule"},
                             {"anchor", op_labels[r.anchor]},
                             {"ops", labels(op_labels, r.ops)},
                             {"reason", r.reason}});
  for (const RejectedRewrite& r : rejected_rewrites)
    rejected_list.push_back({{"stage", "discovery"},
                             {"rewrite", r.rewrite},
                             {"ops", r.op_labels},
                             {"reason", r.reason}});
  report["rejected"] = rejected_list;
  report["discovery"] = discovery_json(*this);
  return report.dump(2);
}

}  // namespace metile::graph
