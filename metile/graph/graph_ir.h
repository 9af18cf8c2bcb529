// Graph IR: a typed compute DAG recorded before any kernel boundary is chosen.
//
// Values are SSA: each is a graph input or the single result of one op. Ops are stored in
// creation order, which is a topological order. A Graph is immutable; GraphBuilder makes it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "metile/discovery/reduction_law.h"
#include "metile/graph/tensor_spec.h"

namespace metile::graph {

enum class OpKind : uint8_t {
#define GRAPH_OP(kind, name, fusion_class, doc) kind,
#include "metile/graph/graph_ops.def"
};

// How the fusion planner may place an op (fusion/fusion_rules.h states the rules).
enum class FusionClass : uint8_t { Elementwise, RowReduction, Matmul, Opaque };

std::string_view op_kind_name(OpKind kind);  // "rms_norm"
FusionClass fusion_class(OpKind kind);
std::string_view fusion_class_name(FusionClass c);

using AttrValue = std::variant<int64_t, double>;

struct Op {
  int id = -1;
  OpKind kind = OpKind::Add;
  std::vector<int> inputs;  // value ids, in operand order
  int output = -1;          // value id of the result
  // Named attributes: "factor", "eps", "scale" (double); "axis" (normalised, >= 0),
  // "keepdims", "causal" (0/1), "certificate" (index into Graph::certificates()).
  std::map<std::string, AttrValue> attrs;

  std::string_view name() const { return op_kind_name(kind); }
  // Throw InternalError when the attribute is missing or has the other type.
  int64_t int_attr(const std::string& key) const;
  double float_attr(const std::string& key) const;
};

struct ValueInfo {
  int id = -1;
  std::string name;  // the input's name, or the value id's digits for an op result
  TensorSpec spec;
  int producer = -1;       // op id, or -1 for a graph input
  std::vector<int> users;  // op ids reading the value, ascending, without repeats

  std::string ref() const { return "%" + name; }  // "%values", "%3"
};

// flash_attention's batch rule: q (..., L, D), kt (..., D, S) and v (..., S, E) of one rank,
// kt and v of one batch shape whose every dimension is q's or 1 (grouped-query heads: q
// (kv_heads, group, L, D) reads kt (kv_heads, 1, D, S)).
bool attention_batch_fits(const TensorSpec& q, const TensorSpec& kt, const TensorSpec& v);

class Graph {
 public:
  const std::vector<ValueInfo>& values() const { return values_; }
  const std::vector<Op>& ops() const { return ops_; }
  const std::vector<int>& inputs() const { return inputs_; }    // value ids
  const std::vector<int>& outputs() const { return outputs_; }  // value ids, as listed in build
  const ValueInfo& value(int id) const;
  const Op& op(int id) const;
  const TensorSpec& spec(int value_id) const { return value(value_id).spec; }
  bool is_output(int value_id) const;
  // Ops consuming the result of `op_id`, ascending.
  const std::vector<int>& consumers(int op_id) const { return value(op(op_id).output).users; }
  // Ops producing the operands of `op_id` (graph inputs skipped), ascending, without repeats.
  std::vector<int> producers(int op_id) const;
  // The reduction-law certificates that license discovered ops (flash_attention).
  const std::vector<discovery::Certificate>& certificates() const { return certificates_; }

  // Text form, one op per line:
  //   %2 = add(%values, %residual) : (1, 2048) f16
  std::string str() const;

 private:
  friend class GraphBuilder;
  std::vector<ValueInfo> values_;
  std::vector<Op> ops_;
  std::vector<int> inputs_;
  std::vector<int> outputs_;
  std::vector<discovery::Certificate> certificates_;
};

}  // namespace metile::graph
