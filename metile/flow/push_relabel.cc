// Phase 1 moves excess toward the sink, always from a highest-labelled active vertex. Labels
// are lower bounds on the residual distance to the current target; vertices labelled n are
// known to be cut off from it and leave the computation.
//
// Buckets: per label, a stack of active vertices and a doubly linked list of inactive ones,
// so the gap test (is a label empty?) and the gap sweep are cheap. Global relabeling resets
// every label to the exact BFS distance once enough relabel work has accumulated.
//
// Phase 2 runs the same machinery with the source as target, draining the excess stranded
// in phase 1 back to s so that the final residual graph is that of a real flow (the min cut
// is then read off it exactly as for Dinic).
#include "metile/flow/push_relabel.h"

#include <algorithm>

#include "metile/support/errors.h"

namespace metile::flow {

namespace {

constexpr int kNone = -1;

class PushRelabel {
 public:
  PushRelabel(ResidualGraph& g, Deadline deadline, const PushRelabelTuning& tuning)
      : g_(g),
        deadline_(deadline),
        n_(g.vertex_count),
        tuning_(tuning),
        label_(n_),
        current_(n_),
        excess_(n_, 0),
        active_head_(n_ + 1, kNone),
        next_active_(n_),
        inactive_head_(n_ + 1, kNone),
        next_inactive_(n_),
        prev_inactive_(n_) {
    queue_.reserve(n_);
    work_limit_ = static_cast<long long>(tuning.global_relabel_alpha * n_ +
                                         tuning.global_relabel_arc_weight * g.arcs.size() / 2);
  }

  Capacity run(int s, int t) {
    saturate_source_arcs(s);
    drain(/*target=*/t, /*excluded=*/s);
    const Capacity value = excess_[t];
    bool stranded = false;
    for (int v = 0; v < n_ && !stranded; ++v) stranded = v != s && v != t && excess_[v] > 0;
    if (stranded) {
      drain(/*target=*/s, /*excluded=*/t);
      for (int v = 0; v < n_; ++v)
        METILE_ASSERT(v == s || v == t || excess_[v] == 0,
                      "push-relabel phase 2 left excess at vertex " + std::to_string(v));
    }
    return value;
  }

 private:
  void saturate_source_arcs(int s) {
    Capacity total = 0;
    for (int a = g_.first[s]; a < g_.first[s + 1]; ++a) {
      ResidualArc& arc = g_.arcs[a];
      const Capacity delta = arc.residual;
      if (delta == 0) continue;
      if (__builtin_add_overflow(total, delta, &total))
        throw UserError("push-relabel: the source's arc capacities sum past 2^63; use Dinic");
      arc.residual = 0;
      g_.arcs[arc.reverse].residual += delta;
      excess_[arc.head] += delta;
    }
  }

  // Moves every excess that can reach `target` into it; `excluded` (the other terminal) is
  // never relabelled and never receives pushes.
  void drain(int target, int excluded) {
    target_ = target;
    excluded_ = excluded;
    global_relabel();
    while (max_active_ > 0) {
      const int v = active_head_[max_active_];
      if (v == kNone) {
        --max_active_;
        continue;
      }
      active_head_[max_active_] = next_active_[v];
      deadline_.tick();
      discharge(v);
      if (work_ > work_limit_) global_relabel();
    }
  }

  void add_active(int v, int d) {
    next_active_[v] = active_head_[d];
    active_head_[d] = v;
    if (d > max_active_) max_active_ = d;
  }

  void add_inactive(int v, int d) {
    const int head = inactive_head_[d];
    next_inactive_[v] = head;
    prev_inactive_[v] = kNone;
    if (head != kNone) prev_inactive_[head] = v;
    inactive_head_[d] = v;
  }

  void remove_inactive(int v, int d) {
    const int next = next_inactive_[v], prev = prev_inactive_[v];
    if (prev != kNone)
      next_inactive_[prev] = next;
    else
      inactive_head_[d] = next;
    if (next != kNone) prev_inactive_[next] = prev;
  }

  // Exact labels: BFS distance to the target over residual arcs; unreachable vertices get n.
  void global_relabel() {
    work_ = 0;
    std::fill(label_.begin(), label_.end(), n_);
    std::fill(active_head_.begin(), active_head_.begin() + max_label_ + 1, kNone);
    std::fill(inactive_head_.begin(), inactive_head_.begin() + max_label_ + 1, kNone);
    max_active_ = 0;
    max_label_ = 0;
    queue_.clear();
    label_[target_] = 0;
    queue_.push_back(target_);
    for (size_t i = 0; i < queue_.size(); ++i) {
      const int u = queue_[i];
      const int d = label_[u] + 1;
      for (int a = g_.first[u]; a < g_.first[u + 1]; ++a) {
        const ResidualArc& arc = g_.arcs[a];
        const int w = arc.head;
        if (label_[w] != n_ || w == excluded_ || g_.arcs[arc.reverse].residual == 0) continue;
        label_[w] = d;
        current_[w] = g_.first[w];
        queue_.push_back(w);
        if (excess_[w] > 0)
          add_active(w, d);
        else
          add_inactive(w, d);
        max_label_ = d;
      }
    }
  }

  // Labels above `gap` are unreachable from the target now: retire their vertices.
  void retire_above(int gap) {
    for (int d = gap + 1; d <= max_label_; ++d) {
      for (int v = inactive_head_[d]; v != kNone; v = next_inactive_[v]) label_[v] = n_;
      for (int v = active_head_[d]; v != kNone; v = next_active_[v]) label_[v] = n_;
      inactive_head_[d] = active_head_[d] = kNone;
    }
    max_label_ = gap - 1;
    if (max_active_ > max_label_) max_active_ = max_label_;
  }

  void discharge(int v) {
    int d = label_[v];
    const int end = g_.first[v + 1];
    Capacity ex = excess_[v];
    while (true) {
      int a = current_[v];
      for (; a < end; ++a) {
        ResidualArc& arc = g_.arcs[a];
        if (arc.residual == 0) continue;
        const int w = arc.head;
        if (label_[w] != d - 1) continue;
        const Capacity delta = std::min(ex, arc.residual);
        arc.residual -= delta;
        g_.arcs[arc.reverse].residual += delta;
        if (excess_[w] == 0 && w != target_) {
          remove_inactive(w, d - 1);
          add_active(w, d - 1);
        }
        excess_[w] += delta;
        ex -= delta;
        if (ex == 0) break;
      }
      if (ex == 0) {
        excess_[v] = 0;
        current_[v] = a;
        add_inactive(v, d);
        return;
      }
      excess_[v] = ex;
      // v must be relabelled. If it was alone at its label, nothing above can reach the target.
      if (active_head_[d] == kNone && inactive_head_[d] == kNone) {
        retire_above(d);
        label_[v] = n_;
        return;
      }
      int best_label = n_, best_arc = end;
      for (int b = g_.first[v]; b < end; ++b) {
        const ResidualArc& arc = g_.arcs[b];
        if (arc.residual > 0 && label_[arc.head] + 1 < best_label) {
          best_label = label_[arc.head] + 1;
          best_arc = b;
        }
      }
      work_ += tuning_.relabel_base_cost + (end - g_.first[v]);
      if (best_label >= n_) {
        label_[v] = n_;
        return;
      }
      d = label_[v] = best_label;
      current_[v] = best_arc;
      if (d > max_label_) max_label_ = d;
    }
  }

  ResidualGraph& g_;
  Deadline deadline_;
  const int n_;
  const PushRelabelTuning tuning_;
  int target_ = 0, excluded_ = 0;
  std::vector<int> label_, current_;
  std::vector<Capacity> excess_;
  std::vector<int> active_head_, next_active_;
  std::vector<int> inactive_head_, next_inactive_, prev_inactive_;
  std::vector<int> queue_;
  int max_active_ = 0, max_label_ = 0;
  long long work_ = 0, work_limit_ = 0;
};

}  // namespace

Capacity run_push_relabel(ResidualGraph& g, int source, int sink, Deadline deadline,
                          const PushRelabelTuning& tuning) {
  return PushRelabel(g, deadline, tuning).run(source, sink);
}

}  // namespace metile::flow
