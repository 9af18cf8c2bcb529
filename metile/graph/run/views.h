// Views: values the executor does not write. A transpose, reshape or slice whose readers can
// all read strides (a matmul's operands, flash_attention, rotary, embedding, cache_update, a
// copy) becomes a view of its input's buffer: an element offset and a stride per axis. The matmul
// of q and a transposed k then reads k through swapped strides instead of waiting for a transpose
// kernel.
//
// A view op is materialised (a copy kernel writes it contiguously) when it is a graph output,
// when an op that reads it cannot read strides (elementwise and row ops load contiguous rows),
// or when it is a reshape of a non-contiguous view (no strides describe that). Such a reshape
// of transposes of a flash_attention result is written by the attention kernel through
// strides instead (the heads' merge before the output projection costs no copy).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "metile/dsl/dsl.h"
#include "metile/graph/graph_ir.h"

namespace metile::graph {

struct View {
  int base = -1;                 // the value whose buffer holds the elements
  int64_t offset = 0;            // the element offset of index (0, ..., 0)
  std::vector<int64_t> strides;  // elements per step along each axis of the value's shape

  static View contiguous(int base, const Shape& shape);
  bool is_contiguous(const Shape& shape) const;
  std::string str(const Graph& graph) const;  // "%3, offset 0, strides (1, 64)"
};

struct ViewPlan {
  std::map<int, View> views;  // value id -> view, for view values only
  std::set<int> view_ops;     // ops that need no kernel

  bool is_view(int value) const { return views.count(value) > 0; }
  // The view of `value`: its own, or the contiguous view of its own buffer.
  View of(const Graph& graph, int value) const;
};

// With `views` false, no view op is a view (each is copied by a kernel of its own); an
// in-place cache_update's result is a view of its cache's buffer either way (its rows are
// written there, no copy of the cache). UserError naming the op when an in-place cache_update's
// cache is read by another op (it would see the new rows), its result is a graph output, or a
// reader of the result cannot read strides.
ViewPlan plan_views(const Graph& graph, bool views = true);

// The view a view op reads its input through to compute its result (the result's shape),
// whether or not the op is a view: a transposed or sliced input view, or for a reshape the
// input's own view (over the input's shape: copy in row-major order).
View source_view(const Graph& graph, const ViewPlan& views, int op_id);

// Buffer parameters of one kernel: a view reads its base's buffer, declared once.
class KernelBuffers {
 public:
  KernelBuffers(const Graph& graph, const ViewPlan& views) : graph_(graph), views_(views) {}
  // The pointer to `value`'s base buffer, declared "read" on first use.
  dsl::Value read(dsl::KernelContext& k, int value) { return read_base(k, view(value).base); }
  dsl::Value read_base(dsl::KernelContext& k, int base);
  // The pointer to `value`'s base buffer, declared "write" (a value written through a view
  // writes its base's buffer).
  dsl::Value write(dsl::KernelContext& k, int value);
  View view(int value) const { return views_.of(graph_, value); }
  const std::vector<int>& params() const { return params_; }
  const std::vector<int>& writes() const { return writes_; }

 private:
  const Graph& graph_;
  const ViewPlan& views_;
  std::map<int, dsl::Value> pointers_;
  std::vector<int> params_, writes_;
};

// The element offset of `index` (one i32 scalar or tile per axis, broadcast together) in a
// view; axes whose index is invalid (absent) contribute nothing.
dsl::Value view_offset(const View& view, const std::vector<dsl::Value>& index);

}  // namespace metile::graph
