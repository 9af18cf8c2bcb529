#include "metile/graph/fusion/conflict_selection.h"

#include <algorithm>
#include <functional>
#include <map>

#include "metile/flow/bipartite_mwis.h"
#include "metile/support/errors.h"

namespace metile::graph {

std::string_view selection_path_name(SelectionPath path) {
  return path == SelectionPath::ExactMinCut ? "exact-min-cut" : "greedy-fallback";
}

namespace {

bool share_op(const std::vector<int>& a, const std::vector<int>& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] == b[j]) return true;
    a[i] < b[j] ? ++i : ++j;
  }
  return false;
}

class Selector {
 public:
  Selector(const std::vector<SelectionCandidate>& candidates,
           const std::vector<std::pair<int, int>>& extra, const std::vector<std::string>& why)
      : cands_(candidates), adj_(candidates.size()), alive_(candidates.size(), 1) {
    const int n = static_cast<int>(cands_.size());
    for (int i = 0; i < n; ++i) {
      const std::vector<int>& ops = cands_[i].ops;
      if (ops.empty() ||
          std::adjacent_find(ops.begin(), ops.end(), std::greater_equal<int>()) != ops.end())
        throw UserError("select_regions: candidate " + std::to_string(i) +
                        " must list its ops in ascending order without repeats");
    }
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        if (share_op(cands_[i].ops, cands_[j].ops)) link(i, j);
    for (size_t e = 0; e < extra.size(); ++e) {
      auto [a, b] = extra[e];
      METILE_ASSERT(a >= 0 && b >= 0 && a < n && b < n && a != b, "bad extra conflict");
      link(a, b);
      extra_reason_[{std::min(a, b), std::max(a, b)}] = e < why.size() ? why[e] : "conflict";
    }
    for (auto& list : adj_) {
      std::sort(list.begin(), list.end());
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    result_.reasons.assign(n, "");
  }

  Selection run() {
    const int n = static_cast<int>(cands_.size());
    for (int i = 0; i < n; ++i)
      if (cands_[i].benefit <= 0) alive_[i] = 0, result_.reasons[i] = "no benefit";
    drop_dominated();
    std::vector<char> seen(n, 0);
    for (int i = 0; i < n; ++i) {
      if (!alive_[i] || seen[i]) continue;
      std::vector<int> members{i};
      seen[i] = 1;
      for (size_t k = 0; k < members.size(); ++k)
        for (int j : adj_[members[k]])
          if (alive_[j] && !seen[j]) seen[j] = 1, members.push_back(j);
      std::sort(members.begin(), members.end());
      solve_component(members);
    }
    std::sort(result_.selected.begin(), result_.selected.end());
    return result_;
  }

 private:
  void link(int a, int b) {
    adj_[a].push_back(b);
    adj_[b].push_back(a);
  }

  std::vector<int> live_neighbours(int c, int except) const {
    std::vector<int> out;
    for (int j : adj_[c])
      if (alive_[j] && j != except) out.push_back(j);
    return out;
  }

  void drop_dominated() {
    for (int a = 0; a < static_cast<int>(cands_.size()); ++a) {
      if (!alive_[a]) continue;
      for (int b : adj_[a]) {
        if (!alive_[b]) continue;
        const SelectionCandidate &ca = cands_[a], &cb = cands_[b];
        if (!std::includes(cb.ops.begin(), cb.ops.end(), ca.ops.begin(), ca.ops.end())) continue;
        if (cb.benefit < ca.benefit) continue;
        if (cb.ops == ca.ops && cb.benefit == ca.benefit && b > a) continue;  // keep the first twin
        std::vector<int> na = live_neighbours(a, b), nb = live_neighbours(b, a);
        if (!std::includes(na.begin(), na.end(), nb.begin(), nb.end())) continue;
        alive_[a] = 0;
        result_.reasons[a] = "dominated by candidate " + std::to_string(b) +
                             ": contains its ops, conflicts with nothing more, benefit " +
                             std::to_string(cb.benefit) + " ns >= " + std::to_string(ca.benefit) +
                             " ns";
        break;
      }
    }
  }

  // Exact maximum-weight independent set of `members` (bipartite), by one min cut.
  std::vector<int> exact(const std::vector<int>& members) const {
    std::map<int, int> local;
    for (int i : members) local.emplace(i, static_cast<int>(local.size()));
    std::vector<int64_t> weights;
    std::vector<std::pair<int, int>> edges;
    for (int i : members) {
      weights.push_back(cands_[i].benefit);
      for (int j : adj_[i])
        if (j > i && local.count(j)) edges.emplace_back(local[i], local[j]);
    }
    std::vector<int> chosen;
    for (int v : flow::max_weight_independent_set_bipartite(static_cast<int>(members.size()),
                                                            weights, edges))
      chosen.push_back(members[v]);
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }

  std::vector<int> greedy(std::vector<int> members) const {
    std::sort(members.begin(), members.end(), [&](int a, int b) {
      if (cands_[a].benefit != cands_[b].benefit) return cands_[a].benefit > cands_[b].benefit;
      if (cands_[a].ops != cands_[b].ops) return cands_[a].ops < cands_[b].ops;
      return a < b;
    });
    std::vector<int> chosen;
    for (int c : members) {
      bool free = std::none_of(chosen.begin(), chosen.end(), [&](int s) {
        return std::binary_search(adj_[c].begin(), adj_[c].end(), s);
      });
      if (free) chosen.push_back(c);
    }
    std::sort(chosen.begin(), chosen.end());
    return chosen;
  }

  int64_t total(const std::vector<int>& set) const {
    int64_t sum = 0;
    for (int i : set) sum += cands_[i].benefit;
    return sum;
  }

  std::string blockers(int c, const std::vector<int>& chosen) const {
    std::string text;
    for (int s : chosen) {
      if (!std::binary_search(adj_[c].begin(), adj_[c].end(), s)) continue;
      text += (text.empty() ? "" : ", ") + std::to_string(s);
      auto it = extra_reason_.find({std::min(c, s), std::max(c, s)});
      if (it != extra_reason_.end()) text += " (" + it->second + ")";
    }
    return text;
  }

  void solve_component(const std::vector<int>& members) {
    std::vector<std::pair<int, int>> edges;
    std::map<int, int> local;
    for (int i : members) local.emplace(i, static_cast<int>(local.size()));
    for (int i : members)
      for (int j : adj_[i])
        if (j > i && local.count(j)) edges.emplace_back(local[i], local[j]);
    ConflictComponent comp;
    comp.candidates = members;
    bool bipartite = flow::is_bipartite(static_cast<int>(members.size()), edges);
    comp.path = bipartite ? SelectionPath::ExactMinCut : SelectionPath::GreedyFallback;
    comp.selected = bipartite ? exact(members) : greedy(members);
    comp.selected_benefit = total(comp.selected);
    for (int c : members) {
      if (std::binary_search(comp.selected.begin(), comp.selected.end(), c)) continue;
      if (bipartite) {
        // The best this component can do with c kept: drop c's neighbours, solve again.
        std::vector<int> rest;
        for (int m : members)
          if (m != c && !std::binary_search(adj_[c].begin(), adj_[c].end(), m)) rest.push_back(m);
        int64_t with_c = cands_[c].benefit + (rest.empty() ? 0 : total(exact(rest)));
        result_.reasons[c] = "conflicts with candidate " + blockers(c, comp.selected) +
                             " whose selection gives larger total benefit (" +
                             std::to_string(comp.selected_benefit) + " ns vs " +
                             std::to_string(with_c) + " ns with this candidate)";
      } else {
        result_.reasons[c] = "conflicts with candidate " + blockers(c, comp.selected) +
                             ", chosen first by the benefit-ordered fallback (non-bipartite "
                             "component)";
      }
    }
    result_.selected.insert(result_.selected.end(), comp.selected.begin(), comp.selected.end());
    result_.components.push_back(std::move(comp));
  }

  const std::vector<SelectionCandidate>& cands_;
  std::vector<std::vector<int>> adj_;
  std::vector<char> alive_;
  std::map<std::pair<int, int>, std::string> extra_reason_;
  Selection result_;
};

}  // namespace

Selection select_regions(const std::vector<SelectionCandidate>& candidates,
                         const std::vector<std::pair<int, int>>& extra_conflicts,
                         const std::vector<std::string>& extra_reasons) {
  return Selector(candidates, extra_conflicts, extra_reasons).run();
}

}  // namespace metile::graph
