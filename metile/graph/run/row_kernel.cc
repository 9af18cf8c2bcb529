#include "metile/graph/run/row_kernel.h"

#include <algorithm>
#include <map>
#include <set>

#include "metile/graph/run/op_emitters.h"
#include "metile/support/errors.h"

namespace metile::graph {

using namespace metile::dsl;

namespace {
// The widest row one program holds as a tile; wider rows of a row op are not supported yet.
constexpr int64_t kMaxRowTile = 32768;
// The block an elementwise region walks its rows in.
constexpr int64_t kElementwiseBlock = 1024;

struct Domain {
  Shape lead;  // every axis but the last
  int64_t columns = 1;
  int64_t rows = 1;
  bool has_row_op = false;
};

Domain region_domain(const Graph& graph, const std::vector<int>& ops) {
  Shape shape;
  bool has_row_op = false;
  for (int id : ops) {
    const Op& op = graph.op(id);
    if (fusion_class(op.kind) == FusionClass::RowReduction) {
      const TensorSpec& x = graph.spec(op.inputs[0]);
      if (op.int_attr("axis") != x.rank() - 1)
        throw UserError("graph executor: " + op_label(graph, id) + " reduces axis " +
                        std::to_string(op.int_attr("axis")) + " of " + shape_str(x.shape) +
                        "; only the last axis is supported");
      shape = x.shape;
      has_row_op = true;
      break;
    }
  }
  if (!has_row_op)
    for (int id : ops) shape = *broadcast_shapes(shape, graph.spec(graph.op(id).output).shape);
  Domain d;
  d.has_row_op = has_row_op;
  if (shape.empty()) shape = {1};
  d.columns = shape.back();
  d.lead.assign(shape.begin(), shape.end() - 1);
  for (int64_t n : d.lead) d.rows *= n;
  return d;
}

// A value's shape padded with leading 1s to the domain's rank.
Shape aligned(const Shape& shape, size_t rank) {
  Shape s(rank > shape.size() ? rank - shape.size() : 0, 1);
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

class RowEmitter {
 public:
  RowEmitter(const Graph& graph, const Domain& domain, int64_t block)
      : graph_(graph), domain_(domain), block_(block) {}

  void declare(KernelContext& k, const std::vector<int>& inputs, const std::vector<int>& outputs) {
    for (int v : inputs)
      pointers_[v] = k.buffer(param_name(graph_, v), storage_dtype(graph_.spec(v).dtype), "read");
    for (int v : outputs)
      pointers_[v] = k.buffer(param_name(graph_, v), storage_dtype(graph_.spec(v).dtype), "write");
    row_ = program_id(0);
  }

  // The ops over the columns [start, start + block).
  void emit_block(const Value& columns, const std::vector<int>& ops,
                  const std::vector<int>& outputs) {
    columns_ = columns;
    in_row_ = columns < domain_.columns;
    values_.clear();
    for (int id : ops) emit(id);
    for (int v : outputs) store_value(v);
  }

 private:
  // The index along lead axis `axis` of this program's row.
  Value coordinate(size_t axis) {
    int64_t inner = 1;
    for (size_t k = axis + 1; k < domain_.lead.size(); ++k) inner *= domain_.lead[k];
    auto q = row_ / inner;
    return q % domain_.lead[axis];
  }

  // The element offset of this row's first element in a value of `shape` (broadcast axes
  // contribute nothing), and whether the value has a column axis (else one element per row).
  std::pair<Value, bool> row_offset(const Shape& shape) {
    Shape s = aligned(shape, domain_.lead.size() + 1);
    bool has_columns = s.back() == domain_.columns;
    Value offset;
    int64_t stride = s.back();
    for (size_t k = domain_.lead.size(); k-- > 0;) {
      if (s[k] != 1) {
        auto term = coordinate(k) * stride;
        offset = offset.valid() ? offset + term : term;
      }
      stride *= s[k];
    }
    if (!offset.valid()) offset = row_ * 0;
    return {offset, has_columns};
  }

  bool reduced_space(int v) const { return reduced_.count(v) > 0; }

  Value operand(int v) {
    if (auto it = values_.find(v); it != values_.end()) return it->second;
    const TensorSpec& spec = graph_.spec(v);
    auto [offset, has_columns] = row_offset(spec.shape);
    const Value& base = pointers_.at(v);
    Value loaded;
    if (has_columns) {
      auto at = offset + columns_;
      loaded = load(base + at, in_row_);
    } else {
      loaded = load(base + offset);
    }
    Value value = loaded.to(compute_dtype(spec.dtype));
    values_[v] = value;
    return value;
  }

  void emit(int id) {
    const Op& op = graph_.op(id);
    if (fusion_class(op.kind) == FusionClass::Elementwise) {
      bool in_reduced =
          std::any_of(op.inputs.begin(), op.inputs.end(), [&](int v) { return reduced_space(v); });
      if (in_reduced) {
        for (int v : op.inputs)
          if (!reduced_space(v))
            throw UserError("graph executor: " + op_label(graph_, id) +
                            " combines a reduced value without keepdims with " +
                            graph_.value(v).ref() +
                            " in one kernel; this is not supported (use "
                            "keepdims=True)");
        reduced_.insert(op.output);
      }
      std::vector<Value> in;
      for (int v : op.inputs) in.push_back(operand(v));
      Value position_row = domain_.lead.empty() ? row_ * 0 : coordinate(domain_.lead.size() - 1);
      values_[op.output] = emit_elementwise(op, in, {position_row, columns_});
      return;
    }
    std::vector<Value> in;
    for (int v : op.inputs) {
      if (reduced_space(v))
        throw UserError("graph executor: " + op_label(graph_, id) +
                        " reduces a value that was reduced without keepdims in the same kernel; "
                        "this is not supported");
      in.push_back(operand(v));
    }
    if (in[0].is_scalar()) in[0] = splat(in[0], {block_});
    values_[op.output] = emit_row_op(op, in, in_row_, domain_.columns);
    bool keepdims = op.attrs.count("keepdims") && op.int_attr("keepdims");
    if (op.kind != OpKind::RmsNorm && op.kind != OpKind::Softmax && !keepdims)
      reduced_.insert(op.output);
  }

  void store_value(int v) {
    const TensorSpec& spec = graph_.spec(v);
    Value value = values_.at(v).to(storage_dtype(spec.dtype));
    const Value& base = pointers_.at(v);
    if (reduced_space(v)) {
      store(base + row_, value);
      return;
    }
    auto [offset, has_columns] = row_offset(spec.shape);
    // A result broadcast along a lead axis is written by the programs at index 0 of it only.
    Shape s = aligned(spec.shape, domain_.lead.size() + 1);
    Value first;
    for (size_t k = 0; k < domain_.lead.size(); ++k)
      if (s[k] == 1 && domain_.lead[k] > 1) {
        auto at_zero = coordinate(k) == 0;
        first = first.valid() ? (first & at_zero) : at_zero;
      }
    auto write = [&] {
      if (has_columns) {
        Value tile = value.is_scalar() ? splat(value, {block_}) : value;
        auto at = offset + columns_;
        store(base + at, tile, in_row_);
      } else {
        Value one = value.is_scalar() ? value : max(value);
        store(base + offset, one);
      }
    };
    if (first.valid())
      if_(first, write);
    else
      write();
  }

  const Graph& graph_;
  const Domain& domain_;
  int64_t block_;
  std::map<int, Value> pointers_;
  std::map<int, Value> values_;
  std::set<int> reduced_;  // values reduced without keepdims: one element per row
  Value row_, columns_, in_row_;
};
}  // namespace

RegionKernel row_kernel(const Graph& graph, const std::vector<int>& ops,
                        const std::vector<int>& inputs, const std::vector<int>& outputs) {
  Domain domain = region_domain(graph, ops);
  int64_t block = next_power_of_2(domain.columns);
  if (domain.has_row_op && block > kMaxRowTile)
    throw UserError("graph executor: a row of " + std::to_string(domain.columns) +
                    " elements is wider than the " + std::to_string(kMaxRowTile) +
                    " one program holds; rows this wide are not supported");
  if (!domain.has_row_op) block = std::min(block, kElementwiseBlock);

  std::string name = "graph";
  for (int id : ops) name += "_" + std::string(graph.op(id).name());
  auto body = [&](KernelContext& k) {
    RowEmitter emitter(graph, domain, block);
    emitter.declare(k, inputs, outputs);
    if (block >= domain.columns) {
      emitter.emit_block(arange(0, block), ops, outputs);
      return;
    }
    tile_range(0, domain.columns, block, [&](Value start) {
      auto columns = start + arange(0, block);
      emitter.emit_block(columns, ops, outputs);
    });
  };
  RegionKernel rk;
  rk.form = "row";
  rk.kernel = trace(name, body);
  rk.grid = {domain.rows, 1, 1};
  rk.params = inputs;
  rk.params.insert(rk.params.end(), outputs.begin(), outputs.end());
  rk.writes = outputs;
  rk.op_ids = ops;
  rk.decision = std::to_string(domain.rows) + " program(s), one row of " +
                std::to_string(domain.columns) + " each, " +
                (block >= domain.columns ? "held as one tile of " + std::to_string(block)
                                         : "in blocks of " + std::to_string(block));
  return rk;
}

}  // namespace metile::graph
