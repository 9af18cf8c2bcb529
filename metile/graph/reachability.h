// Which ops of a Graph reach which others along dataflow edges. The fusion planner asks this
// to keep regions convex and the kernel graph acyclic.
#pragma once

#include <cstdint>
#include <vector>

#include "metile/graph/graph_ir.h"

namespace metile::graph {

class Reachability {
 public:
  explicit Reachability(const Graph& graph);

  // True when a path of one or more edges leads from op `from` to op `to`.
  bool reaches(int from, int to) const { return (descendants_[from][to / 64] >> (to % 64)) & 1; }
  // True when some op of `from` reaches some op of `to` (op lists; a shared op does not count).
  bool reaches_any(const std::vector<int>& from, const std::vector<int>& to) const;
  // True when `ops` leaves no path that exits it and comes back (ops may then form a kernel).
  bool is_convex(const std::vector<int>& ops) const;

 private:
  int op_count_;
  std::vector<std::vector<uint64_t>> descendants_;  // one bitset per op
};

}  // namespace metile::graph
