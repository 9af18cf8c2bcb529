#include "metile/graph/fusion/fusion_plan.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>

#include "metile/graph/fusion/cost_model.h"
#include "metile/graph/fusion/fusion_rules.h"
#include "metile/graph/fusion/parallel_epilogue_rule.h"
#include "metile/graph/reachability.h"
#include "metile/support/errors.h"

namespace metile::graph {

namespace {

bool shares_op(const std::vector<int>& a, const std::vector<int>& b) {
  return std::any_of(a.begin(), a.end(),
                     [&](int o) { return std::binary_search(b.begin(), b.end(), o); });
}

// A single-op region holding a flash_attention node carries its rewrite's savings: the
// chain's launches and the intermediates it no longer materialises.
void describe_rewrite(const FusionPlan& plan, const CostModel& cost, FusedRegion& r) {
  for (size_t k = 0; k < plan.rewrites.size(); ++k) {
    const AttentionRewrite& rw = plan.rewrites[k];
    if (r.op_ids != std::vector<int>{rw.node}) continue;
    r.rule = "flash_attention";
    r.rewrite = static_cast<int>(k);
    r.bytes_saved = rw.bytes_saved;
    r.launches_saved = rw.launches_saved;
    r.benefit_ns = rw.launches_saved * cost.launch_ns() + cost.transfer_ns(rw.bytes_saved);
  }
}

// Kernel order for a grouping of ops (op -> group); empty when the groups form a cycle.
std::vector<int> group_order(const Graph& graph, const std::vector<int>& group, int groups) {
  std::vector<std::set<int>> successors(groups);
  std::vector<int> indegree(groups, 0), first_op(groups, -1);
  for (const Op& op : graph.ops()) {
    if (first_op[group[op.id]] < 0) first_op[group[op.id]] = op.id;
    for (int c : graph.consumers(op.id))
      if (group[c] != group[op.id] && successors[group[op.id]].insert(group[c]).second)
        ++indegree[group[c]];
  }
  // Ready groups leave in the order of their first op, which keeps the plan deterministic.
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>> ready;
  for (int g = 0; g < groups; ++g)
    if (indegree[g] == 0) ready.emplace(first_op[g], g);
  std::vector<int> order;
  while (!ready.empty()) {
    int g = ready.top().second;
    ready.pop();
    order.push_back(g);
    for (int s : successors[g])
      if (--indegree[s] == 0) ready.emplace(first_op[s], s);
  }
  if (static_cast<int>(order.size()) != groups) order.clear();
  return order;
}

FusedRegion make_region(const Graph& graph, const std::vector<int>& ops,
                        const std::vector<int>& region_of_op, int id) {
  FusedRegion r;
  r.id = id;
  r.op_ids = ops;
  for (int o : ops) {
    r.ops.emplace_back(graph.op(o).name());
    for (int v : graph.op(o).inputs) {
      int producer = graph.value(v).producer;
      bool outside = producer < 0 || region_of_op[producer] != id;
      if (outside && std::find(r.inputs.begin(), r.inputs.end(), v) == r.inputs.end())
        r.inputs.push_back(v);
    }
    int out = graph.op(o).output;
    bool escapes = graph.is_output(out);
    for (int c : graph.consumers(o)) escapes = escapes || region_of_op[c] != id;
    if (escapes) r.outputs.push_back(out);
  }
  return r;
}

// The pattern rules' regions join the cut candidates, to be selected like them.
void add_rule_candidates(const Graph& graph, const CostModel& cost, CandidateSet& found,
                         FusionPlan& plan) {
  RuleMatches matches = ParallelEpilogueRule().match(graph, cost);
  plan.rule_rejected = std::move(matches.rejected);
  for (RuleRegion& r : matches.regions) {
    CandidateRegion c;
    c.id = static_cast<int>(found.candidates.size());
    c.anchor = r.anchor;
    c.ops = r.ops;
    c.benefit_ns = r.benefit_ns;
    c.bytes_saved = r.bytes_saved;
    c.launches_saved = r.launches_saved;
    c.resources = r.resources;
    c.solver = "rule";
    c.rule = std::move(r.rule);
    c.roles = std::move(r.roles);
    c.form = std::move(r.form);
    c.schedule = std::move(r.schedule);
    found.candidates.push_back(std::move(c));
  }
}

}  // namespace

int64_t FusionPlan::bytes_saved() const {
  int64_t total = 0;
  for (const FusedRegion& r : regions) total += r.bytes_saved;
  return total;
}

int FusionPlan::launches_saved() const {
  int total = 0;
  for (const FusedRegion& r : regions) total += r.launches_saved;
  return total;
}

FusionPlan plan_graph_fusion(const Graph& input, const target::Target& target,
                             const FusionOptions& options) {
  CostModel cost(target);
  FusionPlan plan;
  plan.target = target.name;
  DiscoveryResult discovered = discover_attention(input, cost, options.discovery);
  plan.graph = std::move(discovered.graph);
  plan.rewrites = std::move(discovered.rewrites);
  plan.rejected_rewrites = std::move(discovered.rejected);
  const Graph& graph = plan.graph;

  Reachability reach(graph);
  CandidateSet found = enumerate_candidate_regions(graph, reach, cost, options.neighbourhood);
  if (options.parallel_epilogue) add_rule_candidates(graph, cost, found, plan);

  for (int o = 0; o < static_cast<int>(graph.ops().size()); ++o)
    plan.op_labels.push_back(op_label(graph, o));
  for (const ValueInfo& v : graph.values()) plan.value_names.push_back(v.ref());

  // Two convex regions may still need each other's results; both cannot be kernels.
  std::vector<SelectionCandidate> selectable;
  std::vector<std::pair<int, int>> cycles;
  for (const CandidateRegion& c : found.candidates) selectable.push_back({c.ops, c.benefit_ns});
  for (size_t i = 0; i < selectable.size(); ++i)
    for (size_t j = i + 1; j < selectable.size(); ++j)
      if (!shares_op(selectable[i].ops, selectable[j].ops) &&
          reach.reaches_any(selectable[i].ops, selectable[j].ops) &&
          reach.reaches_any(selectable[j].ops, selectable[i].ops))
        cycles.emplace_back(i, j);
  Selection selection = select_regions(
      selectable, cycles, std::vector<std::string>(cycles.size(), "kernel dependency cycle"));
  plan.candidate_reasons = selection.reasons;
  plan.components = selection.components;
  plan.rejected = found.rejected;

  std::vector<int> chosen = selection.selected;
  const int op_count = static_cast<int>(graph.ops().size());
  while (true) {
    // Groups: one per chosen candidate, then one per uncovered op.
    std::vector<int> group(op_count, -1);
    for (size_t k = 0; k < chosen.size(); ++k)
      for (int o : found.candidates[chosen[k]].ops) {
        METILE_ASSERT(group[o] < 0, "selected regions overlap at op " + std::to_string(o));
        group[o] = static_cast<int>(k);
      }
    int groups = static_cast<int>(chosen.size());
    for (int o = 0; o < op_count; ++o)
      if (group[o] < 0) group[o] = groups++;
    std::vector<int> order = group_order(graph, group, groups);
    if (order.empty()) {
      // A longer cycle through several regions: give up the least valuable region.
      auto worst = std::min_element(chosen.begin(), chosen.end(), [&](int a, int b) {
        return found.candidates[a].benefit_ns < found.candidates[b].benefit_ns;
      });
      plan.candidate_reasons[*worst] =
          "dropped after selection: with the other selected regions its kernel closes a "
          "dependency cycle";
      for (ConflictComponent& comp : plan.components) std::erase(comp.selected, *worst);
      chosen.erase(worst);
      continue;
    }
    std::vector<int> region_of_group(groups);
    for (int k = 0; k < groups; ++k) region_of_group[order[k]] = k;
    plan.region_of_op.assign(op_count, -1);
    std::vector<std::vector<int>> members(groups);
    for (int o = 0; o < op_count; ++o) {
      plan.region_of_op[o] = region_of_group[group[o]];
      members[plan.region_of_op[o]].push_back(o);
    }
    for (int k = 0; k < groups; ++k) {
      FusedRegion r = make_region(graph, members[k], plan.region_of_op, k);
      int g = order[k];
      if (g < static_cast<int>(chosen.size())) {
        const CandidateRegion& c = found.candidates[chosen[g]];
        r.candidate = c.id;
        r.bytes_saved = c.bytes_saved;
        r.launches_saved = c.launches_saved;
        r.benefit_ns = c.benefit_ns;
        r.rule = c.rule;
        r.roles = c.roles;
        r.form = c.form;
        r.schedule = c.schedule;
      } else {
        describe_rewrite(plan, cost, r);
      }
      plan.regions.push_back(std::move(r));
    }
    break;
  }
  for (ConflictComponent& comp : plan.components) {
    comp.selected_benefit = 0;
    for (int c : comp.selected) comp.selected_benefit += found.candidates[c].benefit_ns;
  }
  plan.candidates = std::move(found.candidates);
  return plan;
}

}  // namespace metile::graph
