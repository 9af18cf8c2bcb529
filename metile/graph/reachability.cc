#include "metile/graph/reachability.h"

#include <algorithm>

namespace metile::graph {

Reachability::Reachability(const Graph& graph)
    : op_count_(static_cast<int>(graph.ops().size())),
      descendants_(graph.ops().size(), std::vector<uint64_t>((graph.ops().size() + 63) / 64, 0)) {
  // Ops are topologically ordered, so consumers are complete before their producers.
  for (int o = op_count_ - 1; o >= 0; --o) {
    std::vector<uint64_t>& mine = descendants_[o];
    for (int c : graph.consumers(o)) {
      mine[c / 64] |= uint64_t{1} << (c % 64);
      for (size_t w = 0; w < mine.size(); ++w) mine[w] |= descendants_[c][w];
    }
  }
}

bool Reachability::reaches_any(const std::vector<int>& from, const std::vector<int>& to) const {
  for (int a : from)
    for (int b : to)
      if (a != b && reaches(a, b)) return true;
  return false;
}

bool Reachability::is_convex(const std::vector<int>& ops) const {
  std::vector<char> inside(op_count_, 0);
  for (int o : ops) inside[o] = 1;
  for (int z = 0; z < op_count_; ++z) {
    if (inside[z]) continue;
    bool from_inside = std::any_of(ops.begin(), ops.end(), [&](int x) { return reaches(x, z); });
    if (from_inside && std::any_of(ops.begin(), ops.end(), [&](int y) { return reaches(z, y); }))
      return false;
  }
  return true;
}

}  // namespace metile::graph
