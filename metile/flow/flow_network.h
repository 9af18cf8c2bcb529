// FlowNetwork: an immutable s-t capacity graph, and the max_flow entry point (seed 000,
// "Max-Flow Selection"). Each solve builds its own residual graph, so one network can be
// solved repeatedly, by several engines, from several threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace metile::flow {

using Capacity = int64_t;
// An "infinite" arc: any capacity of 2^61 or more. Small enough that sums of a few thousand
// of them do not overflow.
inline constexpr Capacity kInfiniteCapacity = Capacity{1} << 61;

// Immutable capacity graph; parallel arcs, zero and infinite capacities allowed.
class FlowNetwork {
 public:
  class Builder {
   public:
    explicit Builder(int vertex_count = 0);
    int add_vertex();  // returns its index
    void add_arc(int from, int to,
                 Capacity capacity);  // UserError on bad vertex or negative capacity
    FlowNetwork build() &&;

   private:
    int vertex_count_ = 0;
    std::vector<int> from_, to_;
    std::vector<Capacity> capacity_;
  };

  FlowNetwork() = default;

  int vertex_count() const { return vertex_count_; }
  int arc_count() const { return static_cast<int>(from_.size()); }
  int arc_from(int arc) const { return from_[arc]; }
  int arc_to(int arc) const { return to_[arc]; }
  Capacity arc_capacity(int arc) const { return capacity_[arc]; }
  uint64_t topology_hash() const {
    return hash_;
  }  // topology and capacities, for the dispatch cache

 private:
  int vertex_count_ = 0;
  std::vector<int> from_, to_;
  std::vector<Capacity> capacity_;
  uint64_t hash_ = 0;
};

struct MaxFlowResult {
  Capacity value = 0;      // saturates at kInfiniteCapacity when an all-infinite s-t path exists
  bool unbounded = false;  // true in that case
  std::vector<char>
      source_side;     // min cut: 1 for vertices reachable from s in the final residual graph
  std::string solver;  // "dinic" | "push-relabel"
};

enum class SolverKind { Dinic, PushRelabel, Auto };

// Exact maximum s-t flow value and a minimum cut. UserError on bad source/sink (out of range
// or equal). Auto follows the dispatch rules of dispatch.h.
MaxFlowResult max_flow(const FlowNetwork& net, int source, int sink,
                       SolverKind kind = SolverKind::Auto);

}  // namespace metile::flow
