#include "metile/graph/run/views.h"

#include <algorithm>

#include "metile/graph/run/op_emitters.h"
#include "metile/graph/run/region_kernel.h"
#include "metile/support/errors.h"

namespace metile::graph {

using namespace metile::dsl;

namespace {
bool is_view_kind(OpKind kind) {
  return kind == OpKind::Transpose || kind == OpKind::Reshape || kind == OpKind::Slice;
}

// Ops whose kernels read their operands through strides.
bool reads_strides(OpKind kind) {
  return is_view_kind(kind) || kind == OpKind::Matmul || kind == OpKind::FlashAttention ||
         kind == OpKind::Rotary || kind == OpKind::Concat || kind == OpKind::Embedding ||
         kind == OpKind::CacheUpdate;
}
}  // namespace

View View::contiguous(int base, const Shape& shape) {
  View v;
  v.base = base;
  v.strides.assign(shape.size(), 0);
  int64_t stride = 1;
  for (size_t k = shape.size(); k-- > 0;) {
    v.strides[k] = stride;
    stride *= shape[k];
  }
  return v;
}

bool View::is_contiguous(const Shape& shape) const {
  View c = contiguous(base, shape);
  for (size_t k = 0; k < shape.size(); ++k)
    if (shape[k] != 1 && strides[k] != c.strides[k]) return false;
  return true;
}

std::string View::str(const Graph& graph) const {
  return graph.value(base).ref() + ", offset " + std::to_string(offset) + ", strides " +
         shape_str(strides);
}

View ViewPlan::of(const Graph& graph, int value) const {
  if (auto it = views.find(value); it != views.end()) return it->second;
  return View::contiguous(value, graph.spec(value).shape);
}

View source_view(const Graph& graph, const ViewPlan& plan, int op_id) {
  const Op& op = graph.op(op_id);
  View v = plan.of(graph, op.inputs[0]);
  if (op.kind == OpKind::Transpose) {
    int rank = graph.spec(op.inputs[0]).rank();
    int64_t a = op.attrs.count("axis0") ? op.int_attr("axis0") : rank - 2;
    int64_t b = op.attrs.count("axis1") ? op.int_attr("axis1") : rank - 1;
    std::swap(v.strides[a], v.strides[b]);
  } else if (op.kind == OpKind::Slice) {
    v.offset += op.int_attr("start") * v.strides[op.int_attr("axis")];
  } else if (op.kind != OpKind::Reshape) {
    throw InternalError("source_view: " + op_label(graph, op_id) + " is not a view op");
  }
  return v;
}

namespace {
// A reshape that must copy because its input is a chain of transposes of a flash_attention
// result (the heads' merge before the output projection) is written by the attention kernel
// instead: its result becomes a view of the reshape's buffer, with the strides that put every
// element where the copy would, and the reshape needs no kernel.
void write_through(const Graph& graph, ViewPlan& plan) {
  for (const Op& reshape : graph.ops()) {
    if (reshape.kind != OpKind::Reshape || plan.view_ops.count(reshape.id)) continue;
    std::vector<int> chain;  // transposes, nearest the reshape first
    int reader = reshape.id, value = reshape.inputs[0];
    auto only_reader = [&](int v, int op) {
      const ValueInfo& info = graph.value(v);
      return !graph.is_output(v) && info.users.size() == 1 && info.users[0] == op;
    };
    while (graph.value(value).producer >= 0 &&
           graph.op(graph.value(value).producer).kind == OpKind::Transpose &&
           plan.view_ops.count(graph.value(value).producer) && only_reader(value, reader)) {
      reader = graph.value(value).producer;
      chain.push_back(reader);
      value = graph.op(reader).inputs[0];
    }
    int producer = graph.value(value).producer;
    if (chain.empty() || producer < 0 || graph.op(producer).kind != OpKind::FlashAttention ||
        !only_reader(value, reader))
      continue;
    // Undo the transposes from the reshape's contiguous input back to the attention result.
    View written = View::contiguous(reshape.output, graph.spec(reshape.inputs[0]).shape);
    for (int t : chain) {
      const Op& op = graph.op(t);
      int rank = graph.spec(op.inputs[0]).rank();
      int64_t a = op.attrs.count("axis0") ? op.int_attr("axis0") : rank - 2;
      int64_t b = op.attrs.count("axis1") ? op.int_attr("axis1") : rank - 1;
      std::swap(written.strides[a], written.strides[b]);
    }
    plan.views[value] = written;
    for (auto t = chain.rbegin(); t != chain.rend(); ++t)
      plan.views[graph.op(*t).output] = source_view(graph, plan, *t);
    plan.view_ops.insert(reshape.id);
  }
}
}  // namespace

namespace {
// An in-place cache_update's result is its cache's buffer (a graph input).
void alias_in_place_updates(const Graph& graph, ViewPlan& plan) {
  for (const Op& op : graph.ops()) {
    if (op.kind != OpKind::CacheUpdate || !op.attrs.count("in_place") || !op.int_attr("in_place"))
      continue;
    const std::string what = "graph executor: the in-place " + op_label(graph, op.id);
    const ValueInfo& cache = graph.value(op.inputs[0]);
    for (int user : cache.users)
      if (user != op.id)
        throw UserError(what + " writes " + cache.ref() + " where it lives, but " +
                        op_label(graph, user) +
                        " reads it too (and would see the new rows); read the update's result "
                        "instead, or drop in_place");
    if (graph.is_output(op.output))
      throw UserError(what + "'s result is a graph output; it is the buffer of " + cache.ref() +
                      ", which the run updates: read that instead");
    for (int user : graph.value(op.output).users)
      if (!reads_strides(graph.op(user).kind))
        throw UserError(what + "'s result (the buffer of " + cache.ref() + ") is read by " +
                        op_label(graph, user) +
                        ", which loads contiguous rows of its own buffers; not supported");
    plan.views[op.output] = View::contiguous(cache.id, graph.spec(op.output).shape);
  }
}
}  // namespace

ViewPlan plan_views(const Graph& graph, bool views) {
  ViewPlan plan;
  alias_in_place_updates(graph, plan);
  if (!views) return plan;
  for (const Op& op : graph.ops()) {
    if (!is_view_kind(op.kind)) continue;
    View v = source_view(graph, plan, op.id);
    if (op.kind == OpKind::Reshape) {
      if (!v.is_contiguous(graph.spec(op.inputs[0]).shape)) continue;
      int64_t offset = v.offset;
      v = View::contiguous(v.base, graph.spec(op.output).shape);
      v.offset = offset;
    }
    const ValueInfo& out = graph.value(op.output);
    bool readable = !graph.is_output(out.id);
    for (int user : out.users) readable = readable && reads_strides(graph.op(user).kind);
    if (!readable) continue;
    plan.views[op.output] = v;
    plan.view_ops.insert(op.id);
  }
  write_through(graph, plan);
  return plan;
}

Value KernelBuffers::read_base(KernelContext& k, int base) {
  if (auto it = pointers_.find(base); it != pointers_.end()) return it->second;
  Value p = k.buffer(param_name(graph_, base), storage_dtype(graph_.spec(base).dtype), "read");
  params_.push_back(base);
  return pointers_[base] = p;
}

Value KernelBuffers::write(KernelContext& k, int value) {
  int base = view(value).base;
  Value p = k.buffer(param_name(graph_, base), storage_dtype(graph_.spec(base).dtype), "write");
  params_.push_back(base);
  writes_.push_back(base);
  return pointers_[base] = p;
}

Value view_offset(const View& view, const std::vector<Value>& index) {
  Value offset;
  for (size_t k = 0; k < index.size() && k < view.strides.size(); ++k) {
    if (!index[k].valid() || view.strides[k] == 0) continue;
    Value term = view.strides[k] == 1 ? index[k] : index[k] * view.strides[k];
    offset = offset.valid() ? offset + term : term;
  }
  if (!offset.valid()) offset = program_id(0) * 0;
  return view.offset == 0 ? offset : offset + view.offset;
}

}  // namespace metile::graph
