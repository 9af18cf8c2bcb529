#include "metile/flow/solve_prelude.h"

#include <vector>

#include "metile/support/errors.h"

namespace metile::flow {

void validate_terminals(const FlowNetwork& net, int source, int sink) {
  const int n = net.vertex_count();
  if (source < 0 || source >= n)
    throw UserError("max_flow: source " + std::to_string(source) +
                    " is not a vertex (network has " + std::to_string(n) + ")");
  if (sink < 0 || sink >= n)
    throw UserError("max_flow: sink " + std::to_string(sink) + " is not a vertex (network has " +
                    std::to_string(n) + ")");
  if (source == sink)
    throw UserError("max_flow: source and sink must differ (both are " + std::to_string(source) +
                    ")");
}

namespace {

// Vertices reachable from `source` along arcs whose capacity is at least `threshold`.
std::vector<char> reach(const FlowNetwork& net, int source, Capacity threshold) {
  const int n = net.vertex_count();
  std::vector<int> first(n + 1, 0), heads;
  for (int a = 0; a < net.arc_count(); ++a)
    if (net.arc_capacity(a) >= threshold) ++first[net.arc_from(a) + 1];
  for (int v = 0; v < n; ++v) first[v + 1] += first[v];
  heads.resize(first[n]);
  std::vector<int> next(first.begin(), first.end() - 1);
  for (int a = 0; a < net.arc_count(); ++a)
    if (net.arc_capacity(a) >= threshold) heads[next[net.arc_from(a)]++] = net.arc_to(a);
  std::vector<char> seen(n, 0);
  std::vector<int> stack{source};
  seen[source] = 1;
  while (!stack.empty()) {
    const int v = stack.back();
    stack.pop_back();
    for (int i = first[v]; i < first[v + 1]; ++i)
      if (!seen[heads[i]]) {
        seen[heads[i]] = 1;
        stack.push_back(heads[i]);
      }
  }
  return seen;
}

}  // namespace

std::optional<MaxFlowResult> unbounded_result(const FlowNetwork& net, int source, int sink,
                                              const std::string& solver) {
  bool any_infinite = false;
  for (int a = 0; a < net.arc_count() && !any_infinite; ++a)
    any_infinite = net.arc_capacity(a) >= kInfiniteCapacity;
  if (!any_infinite) return std::nullopt;
  if (!reach(net, source, kInfiniteCapacity)[sink]) return std::nullopt;
  MaxFlowResult result;
  result.value = kInfiniteCapacity;
  result.unbounded = true;
  result.source_side = reach(net, source, 1);
  result.solver = solver;
  return result;
}

Capacity finite_stand_in_for_infinity(const FlowNetwork& net) {
  Capacity total = 0;
  for (int a = 0; a < net.arc_count(); ++a) {
    const Capacity c = net.arc_capacity(a);
    if (c >= kInfiniteCapacity) continue;
    total += c;  // each c < 2^61, so the sum cannot overflow before the check below trips
    if (total >= kInfiniteCapacity)
      throw UserError(
          "max_flow: the finite capacities sum to 2^61 or more; such flows cannot be told "
          "from an infinite arc (kInfiniteCapacity)");
  }
  return total + 1;
}

}  // namespace metile::flow
