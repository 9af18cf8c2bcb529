#include "metile/graph/graph_ir.h"

#include <algorithm>
#include <charconv>

#include "metile/support/errors.h"

namespace metile::graph {

bool attention_batch_fits(const TensorSpec& q, const TensorSpec& kt, const TensorSpec& v) {
  int r = q.rank();
  if (r < 2 || kt.rank() != r || v.rank() != r) return false;
  for (int i = 0; i + 2 < r; ++i)
    if (kt.shape[i] != v.shape[i] || (kt.shape[i] != q.shape[i] && kt.shape[i] != 1)) return false;
  return true;
}

std::string_view op_kind_name(OpKind kind) {
  switch (kind) {
#define GRAPH_OP(k, name, fusion_class, doc) \
  case OpKind::k:                            \
    return name;
#include "metile/graph/graph_ops.def"
  }
  throw InternalError("op_kind_name: unknown op kind");
}

FusionClass fusion_class(OpKind kind) {
  switch (kind) {
#define GRAPH_OP(k, name, fusion_class, doc) \
  case OpKind::k:                            \
    return FusionClass::fusion_class;
#include "metile/graph/graph_ops.def"
  }
  throw InternalError("fusion_class: unknown op kind");
}

std::string_view fusion_class_name(FusionClass c) {
  switch (c) {
    case FusionClass::Elementwise:
      return "elementwise";
    case FusionClass::RowReduction:
      return "row-reduction";
    case FusionClass::Matmul:
      return "matmul";
    case FusionClass::Opaque:
      return "opaque";
  }
  throw InternalError("fusion_class_name: unknown class");
}

int64_t Op::int_attr(const std::string& key) const {
  auto it = attrs.find(key);
  METILE_ASSERT(it != attrs.end() && std::holds_alternative<int64_t>(it->second),
                std::string(name()) + " has no integer attribute " + key);
  return std::get<int64_t>(it->second);
}

double Op::float_attr(const std::string& key) const {
  auto it = attrs.find(key);
  METILE_ASSERT(it != attrs.end() && std::holds_alternative<double>(it->second),
                std::string(name()) + " has no float attribute " + key);
  return std::get<double>(it->second);
}

const ValueInfo& Graph::value(int id) const {
  METILE_ASSERT(id >= 0 && id < static_cast<int>(values_.size()),
                "value id " + std::to_string(id) + " out of range");
  return values_[id];
}

const Op& Graph::op(int id) const {
  METILE_ASSERT(id >= 0 && id < static_cast<int>(ops_.size()),
                "op id " + std::to_string(id) + " out of range");
  return ops_[id];
}

bool Graph::is_output(int value_id) const {
  return std::find(outputs_.begin(), outputs_.end(), value_id) != outputs_.end();
}

std::vector<int> Graph::producers(int op_id) const {
  std::vector<int> result;
  for (int v : op(op_id).inputs)
    if (int p = value(v).producer; p >= 0) result.push_back(p);
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

namespace {
std::string attr_text(const AttrValue& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  // The shortest text that reads back as the same double, so text round-trips exactly.
  char text[32];
  auto end = std::to_chars(text, text + sizeof text, std::get<double>(v)).ptr;
  return std::string(text, end);
}
}  // namespace

std::string Graph::str() const {
  std::string s = "graph {\n";
  for (int v : inputs_) s += "  " + values_[v].ref() + " = input : " + values_[v].spec.str() + "\n";
  for (const Op& o : ops_) {
    s += "  " + values_[o.output].ref() + " = " + std::string(o.name()) + "(";
    for (size_t i = 0; i < o.inputs.size(); ++i) s += (i ? ", " : "") + values_[o.inputs[i]].ref();
    s += ")";
    if (!o.attrs.empty()) {
      s += " {";
      bool first = true;
      for (const auto& [key, val] : o.attrs) {
        s += (first ? "" : ", ") + key + " = " + attr_text(val);
        first = false;
      }
      s += "}";
    }
    s += " : " + values_[o.output].spec.str() + "\n";
  }
  s += "  outputs(";
  for (size_t i = 0; i < outputs_.size(); ++i) s += (i ? ", " : "") + values_[outputs_[i]].ref();
  return s + ")\n}\n";
}

}  // namespace metile::graph
