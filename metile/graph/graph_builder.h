// GraphBuilder records tensor operations into a Graph without choosing kernel boundaries.
//
// Every method checks shapes and dtypes where the op is added and throws metile::UserError
// naming the op and the shapes, e.g. "add: shapes (1, 2048) and (1, 1024) do not broadcast".
// Axis arguments accept negative values counted from the end.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/graph/graph_ir.h"

namespace metile::graph {

// A handle to a value recorded by one GraphBuilder.
struct Value {
  int id = -1;
  uint32_t builder = 0;  // which builder made it; handles of another builder are rejected
};

class GraphBuilder {
 public:
  GraphBuilder();

  // A graph input; names are identifiers ([A-Za-z_][A-Za-z0-9_]*) and unique.
  Value input(const std::string& name, TensorSpec spec);

  // Elementwise, numpy broadcasting; both operands have the same dtype.
  Value add(Value a, Value b);
  Value subtract(Value a, Value b);
  Value multiply(Value a, Value b);
  Value divide(Value a, Value b);  // floats only
  Value scale(Value x, double factor);
  Value exp(Value x);
  Value silu(Value x);
  // x converted to `dtype` (floats round to nearest even; float to i32 truncates).
  Value cast(Value x, DType dtype);
  // -inf above the diagonal of the last two axes (rank >= 2, floats).
  Value causal_mask(Value x);

  // x * rsqrt(mean(x^2, last axis) + eps) * weight; weight is 1-D with x's last dimension.
  Value rms_norm(Value x, Value weight, double eps);
  Value softmax(Value x, int axis = -1);
  Value sum(Value x, int axis, bool keepdims = false);
  Value max(Value x, int axis, bool keepdims = false);
  Value mean(Value x, int axis, bool keepdims = false);

  // a @ b over the last two axes (rank >= 2 both); leading axes broadcast.
  Value matmul(Value a, Value b);
  // Swaps two axes (torch.transpose; rank >= 2; by default the last two).
  Value transpose(Value x, int axis0 = -2, int axis1 = -1);
  // The same elements, row-major, with `shape` (one dimension may be -1: inferred).
  Value reshape(Value x, const Shape& shape);
  // x[..., start:stop, ...] along `axis`; 0 <= start < stop <= the axis' size.
  Value slice(Value x, int axis, int64_t start, int64_t stop);
  // The operands (one dtype, equal shapes but along `axis`) joined along `axis`.
  Value concat(const std::vector<Value>& parts, int axis);
  // Rotary position embedding, half rotation: x (..., T, D) with D even, cos and sin (T, D/2)
  // of x's dtype.
  Value rotary(Value x, Value cos, Value sin);
  // table[ids]: table (V, H) float, ids (...) i32; the result is (..., H).
  Value embedding(Value table, Value ids);
  // cache (..., S, D) with rows [p, p + T) replaced by new (..., T, D), p = position[0] (an
  // i32 tensor of shape (1,), read at run time); a new tensor. With in_place, the rows are
  // written into the cache's own buffer (a graph input, which the run mutates) and the result
  // is that buffer: no copy of the cache. UserError when the cache is not a graph input; the
  // executor also requires that nothing else reads the cache and that the result is not a
  // graph output.
  Value cache_update(Value cache, Value update, Value position, bool in_place = false);

  // softmax(scale * q @ kt [causal mask]) @ v as one node: q (..., L, D), kt (..., D, S),
  // v (..., S, E), equal batch dimensions, one float dtype. Made by discovery
  // (graph/discovery/discover_attention.h), which passes the weighted-softmax certificate
  // that licenses it; an incomplete certificate is a user error.
  Value flash_attention(Value q, Value kt, Value v, double scale, bool causal,
                        discovery::Certificate certificate);

  // Records `op` of `source` again over `inputs` (this builder's values for its operands),
  // with its attributes (and certificate): the step of a rewrite that keeps an op.
  Value copy_op(const Graph& source, const Op& op, const std::vector<Value>& inputs);

  const TensorSpec& spec(Value v) const;

  // The graph computing `outputs` (op results, distinct). Every op must contribute to an
  // output: a dropped result is a user error, never silently discarded. The builder stays
  // usable afterwards.
  Graph build(const std::vector<Value>& outputs) const;

 private:
  int checked(Value v, const char* op) const;
  // "%5 = add(%values, %residual)": the node an op being added would be, for its errors.
  std::string node_text(OpKind kind, const std::vector<Value>& operands) const;
  // add_op(), its UserError naming the node it was adding.
  template <typename Fn>
  Value named(OpKind kind, const std::vector<Value>& operands, Fn&& add_op);
  Value record(OpKind kind, std::vector<Value> operands, TensorSpec result,
               std::map<std::string, AttrValue> attrs = {});
  Value binary(OpKind kind, Value a, Value b);
  Value unary_float(OpKind kind, Value x);
  Value reduction(OpKind kind, Value x, int axis, bool keepdims);

  uint32_t id_;
  Graph graph_;
};

}  // namespace metile::graph
