// Each phase labels vertices by BFS distance *to the sink* in the residual graph, so every
// labelled vertex starts the phase with an admissible path to t and the DFS rarely dead-ends.
// The DFS is iterative with a current-arc pointer per vertex; after an augmentation it retreats
// only to the tail of the first saturated arc.
#include "metile/flow/dinic.h"

#include <algorithm>
#include <limits>

namespace metile::flow {

namespace {

constexpr int kUnlabelled = std::numeric_limits<int>::max();

class Dinic {
 public:
  Dinic(ResidualGraph& g, int s, int t, Deadline deadline)
      : g_(g), s_(s), t_(t), deadline_(deadline), dist_(g.vertex_count), current_(g.vertex_count) {
    queue_.reserve(g.vertex_count);
    path_.reserve(g.vertex_count);
  }

  Capacity run() {
    Capacity total = 0;
    while (label_distances_to_sink()) {
      std::copy(g_.first.begin(), g_.first.end() - 1, current_.begin());
      total += blocking_flow();
    }
    return total;
  }

 private:
  // BFS from t over reversed residual arcs; stops once the source's level is complete.
  bool label_distances_to_sink() {
    std::fill(dist_.begin(), dist_.end(), kUnlabelled);
    queue_.clear();
    dist_[t_] = 0;
    queue_.push_back(t_);
    for (size_t i = 0; i < queue_.size(); ++i) {
      deadline_.tick();
      const int u = queue_[i];
      const int du = dist_[u];
      if (dist_[s_] != kUnlabelled && du >= dist_[s_]) break;
      for (int a = g_.first[u]; a < g_.first[u + 1]; ++a) {
        const ResidualArc& arc = g_.arcs[a];
        // arc.reverse runs head -> u; it is residual when the head can send to u.
        if (dist_[arc.head] == kUnlabelled && g_.arcs[arc.reverse].residual > 0) {
          dist_[arc.head] = du + 1;
          queue_.push_back(arc.head);
        }
      }
    }
    return dist_[s_] != kUnlabelled;
  }

  Capacity blocking_flow() {
    Capacity pushed = 0;
    int v = s_;
    path_.clear();  // arcs from s to v
    while (true) {
      deadline_.tick();
      if (v == t_) {
        Capacity bottleneck = g_.arcs[path_[0]].residual;
        for (int a : path_) bottleneck = std::min(bottleneck, g_.arcs[a].residual);
        size_t retreat_to = path_.size();
        for (size_t i = 0; i < path_.size(); ++i) {
          ResidualArc& arc = g_.arcs[path_[i]];
          arc.residual -= bottleneck;
          g_.arcs[arc.reverse].residual += bottleneck;
          if (arc.residual == 0 && retreat_to == path_.size()) retreat_to = i;
        }
        pushed += bottleneck;
        path_.resize(retreat_to);
        v = path_.empty() ? s_ : g_.arcs[path_.back()].head;
        continue;
      }
      // Advance along the first admissible arc at or after the current arc.
      const int end = g_.first[v + 1];
      const int want = dist_[v] - 1;
      int a = current_[v];
      while (a < end && !(g_.arcs[a].residual > 0 && dist_[g_.arcs[a].head] == want)) ++a;
      current_[v] = a;
      if (a < end) {
        path_.push_back(a);
        v = g_.arcs[a].head;
        continue;
      }
      // Dead end: v cannot reach t in this phase any more.
      dist_[v] = kUnlabelled;
      if (v == s_) break;
      path_.pop_back();
      v = path_.empty() ? s_ : g_.arcs[path_.back()].head;
      ++current_[v];
    }
    return pushed;
  }

  ResidualGraph& g_;
  const int s_, t_;
  Deadline deadline_;
  std::vector<int> dist_, current_, queue_, path_;
};

}  // namespace

Capacity run_dinic(ResidualGraph& g, int source, int sink, Deadline deadline) {
  return Dinic(g, source, sink, deadline).run();
}

}  // namespace metile::flow
