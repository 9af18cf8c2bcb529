#include "metile/graph/graph_builder.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <sstream>

#include "metile/support/errors.h"

namespace metile::graph {

namespace {
std::atomic<uint32_t> next_builder_id{1};

bool is_identifier(const std::string& s) {
  auto head = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (s.empty() || !head(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return head(c) || (c >= '0' && c <= '9'); });
}

std::string name_of(OpKind kind) {
  return std::string(op_kind_name(kind));
}

void require_float(OpKind kind, const TensorSpec& s) {
  if (!is_float(s.dtype))
    throw UserError(name_of(kind) + ": expects a floating-point tensor, got " + s.str());
}

int normalise_axis(OpKind kind, const TensorSpec& s, int axis) {
  if (axis < -s.rank() || axis >= s.rank())
    throw UserError(name_of(kind) + ": axis " + std::to_string(axis) +
                    " is out of range for shape " + shape_str(s.shape));
  return axis < 0 ? axis + s.rank() : axis;
}
}  // namespace

GraphBuilder::GraphBuilder() : id_(next_builder_id++) {}

std::string GraphBuilder::node_text(OpKind kind, const std::vector<Value>& operands) const {
  std::string s = "%" + std::to_string(graph_.values_.size()) + " = " + name_of(kind) + "(";
  bool first = true;
  for (Value v : operands) {
    bool ours = v.builder == id_ && v.id >= 0 && v.id < static_cast<int>(graph_.values_.size());
    s += (first ? "" : ", ") + (ours ? graph_.values_[v.id].ref() : std::string("?"));
    first = false;
  }
  return s + ")";
}

template <typename Fn>
Value GraphBuilder::named(OpKind kind, const std::vector<Value>& operands, Fn&& add_op) {
  try {
    return add_op();
  } catch (const UserError& e) {
    throw UserError(e.rule() + ", in " + node_text(kind, operands));
  }
}

int GraphBuilder::checked(Value v, const char* op) const {
  if (v.builder != id_ || v.id < 0 || v.id >= static_cast<int>(graph_.values_.size()))
    throw UserError(std::string(op) + ": the value was not made by this GraphBuilder");
  return v.id;
}

const TensorSpec& GraphBuilder::spec(Value v) const {
  return graph_.values_[checked(v, "spec")].spec;
}

Value GraphBuilder::input(const std::string& name, TensorSpec spec) {
  if (!is_identifier(name))
    throw UserError("input: name '" + name + "' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  for (int v : graph_.inputs_)
    if (graph_.values_[v].name == name)
      throw UserError("input: name '" + name + "' is already used");
  int id = static_cast<int>(graph_.values_.size());
  graph_.values_.push_back(ValueInfo{id, name, std::move(spec), -1, {}});
  graph_.inputs_.push_back(id);
  return Value{id, id_};
}

Value GraphBuilder::record(OpKind kind, std::vector<Value> operands, TensorSpec result,
                           std::map<std::string, AttrValue> attrs) {
  Op op;
  op.id = static_cast<int>(graph_.ops_.size());
  op.kind = kind;
  op.attrs = std::move(attrs);
  op.output = static_cast<int>(graph_.values_.size());
  for (Value v : operands) {
    op.inputs.push_back(v.id);
    std::vector<int>& users = graph_.values_[v.id].users;
    if (users.empty() || users.back() != op.id) users.push_back(op.id);
  }
  graph_.values_.push_back(
      ValueInfo{op.output, std::to_string(op.output), std::move(result), op.id, {}});
  graph_.ops_.push_back(std::move(op));
  return Value{graph_.ops_.back().output, id_};
}

Value GraphBuilder::binary(OpKind kind, Value a, Value b) {
  const TensorSpec& sa = graph_.values_[checked(a, op_kind_name(kind).data())].spec;
  const TensorSpec& sb = graph_.values_[checked(b, op_kind_name(kind).data())].spec;
  if (sa.dtype != sb.dtype)
    throw UserError(name_of(kind) + ": dtypes " + std::string(dtype_name(sa.dtype)) + " and " +
                    std::string(dtype_name(sb.dtype)) + " differ (shapes " + shape_str(sa.shape) +
                    " and " + shape_str(sb.shape) + ")");
  if (kind == OpKind::Divide) require_float(kind, sa);
  std::optional<Shape> shape = broadcast_shapes(sa.shape, sb.shape);
  if (!shape)
    throw UserError(name_of(kind) + ": shapes " + shape_str(sa.shape) + " and " +
                    shape_str(sb.shape) + " do not broadcast");
  return record(kind, {a, b}, TensorSpec(*shape, sa.dtype));
}

Value GraphBuilder::add(Value a, Value b) {
  return named(OpKind::Add, {a, b}, [&]() -> Value { return binary(OpKind::Add, a, b); });
}
Value GraphBuilder::subtract(Value a, Value b) {
  return named(OpKind::Subtract, {a, b}, [&]() -> Value { return binary(OpKind::Subtract, a, b); });
}
Value GraphBuilder::multiply(Value a, Value b) {
  return named(OpKind::Multiply, {a, b}, [&]() -> Value { return binary(OpKind::Multiply, a, b); });
}
Value GraphBuilder::divide(Value a, Value b) {
  return named(OpKind::Divide, {a, b}, [&]() -> Value { return binary(OpKind::Divide, a, b); });
}

Value GraphBuilder::unary_float(OpKind kind, Value x) {
  TensorSpec s = graph_.values_[checked(x, op_kind_name(kind).data())].spec;
  require_float(kind, s);
  return record(kind, {x}, s);
}

Value GraphBuilder::scale(Value x, double factor) {
  return named(OpKind::Scale, {x}, [&]() -> Value {
    TensorSpec s = graph_.values_[checked(x, "scale")].spec;
    require_float(OpKind::Scale, s);
    return record(OpKind::Scale, {x}, s, {{"factor", factor}});
  });
}

Value GraphBuilder::exp(Value x) {
  return named(OpKind::Exp, {x}, [&]() -> Value { return unary_float(OpKind::Exp, x); });
}
Value GraphBuilder::silu(Value x) {
  return named(OpKind::Silu, {x}, [&]() -> Value { return unary_float(OpKind::Silu, x); });
}

Value GraphBuilder::cast(Value x, DType dtype) {
  return named(OpKind::Cast, {x}, [&]() -> Value {
    TensorSpec s = graph_.values_[checked(x, "cast")].spec;
    s.dtype = dtype;
    return record(OpKind::Cast, {x}, s, {{"dtype", int64_t{static_cast<int>(dtype)}}});
  });
}

Value GraphBuilder::causal_mask(Value x) {
  return named(OpKind::CausalMask, {x}, [&]() -> Value {
    const TensorSpec& s = graph_.values_[checked(x, "causal_mask")].spec;
    if (s.rank() < 2)
      throw UserError("causal_mask: expects rank >= 2 (rows, columns), got shape " +
                      shape_str(s.shape));
    return unary_float(OpKind::CausalMask, x);
  });
}

Value GraphBuilder::rms_norm(Value x, Value weight, double eps) {
  return named(OpKind::RmsNorm, {x, weight}, [&]() -> Value {
    TensorSpec sx = graph_.values_[checked(x, "rms_norm")].spec;
    const TensorSpec& sw = graph_.values_[checked(weight, "rms_norm")].spec;
    require_float(OpKind::RmsNorm, sx);
    if (sx.rank() < 1) throw UserError("rms_norm: expects rank >= 1, got shape ()");
    if (sw.shape != Shape{sx.shape.back()})
      throw UserError("rms_norm: weight shape " + shape_str(sw.shape) + " must be (" +
                      std::to_string(sx.shape.back()) + ",), the last dimension of x " +
                      shape_str(sx.shape));
    if (sw.dtype != sx.dtype)
      throw UserError("rms_norm: weight dtype " + std::string(dtype_name(sw.dtype)) +
                      " differs from x dtype " + std::string(dtype_name(sx.dtype)));
    if (!(eps > 0)) {
      std::ostringstream text;
      text << "rms_norm: eps must be positive, got " << eps;
      throw UserError(text.str());
    }
    return record(OpKind::RmsNorm, {x, weight}, sx,
                  {{"axis", int64_t{sx.rank() - 1}}, {"eps", eps}});
  });
}

Value GraphBuilder::softmax(Value x, int axis) {
  return named(OpKind::Softmax, {x}, [&]() -> Value {
    TensorSpec s = graph_.values_[checked(x, "softmax")].spec;
    require_float(OpKind::Softmax, s);
    int64_t a = normalise_axis(OpKind::Softmax, s, axis);
    return record(OpKind::Softmax, {x}, s, {{"axis", a}});
  });
}

Value GraphBuilder::reduction(OpKind kind, Value x, int axis, bool keepdims) {
  TensorSpec s = graph_.values_[checked(x, op_kind_name(kind).data())].spec;
  if (kind == OpKind::Mean) require_float(kind, s);
  int a = normalise_axis(kind, s, axis);
  Shape out = s.shape;
  if (keepdims)
    out[a] = 1;
  else
    out.erase(out.begin() + a);
  return record(kind, {x}, TensorSpec(out, s.dtype),
                {{"axis", int64_t{a}}, {"keepdims", int64_t{keepdims}}});
}

Value GraphBuilder::sum(Value x, int axis, bool keepdims) {
  return named(OpKind::Sum, {x},
               [&]() -> Value { return reduction(OpKind::Sum, x, axis, keepdims); });
}
Value GraphBuilder::max(Value x, int axis, bool keepdims) {
  return named(OpKind::Max, {x},
               [&]() -> Value { return reduction(OpKind::Max, x, axis, keepdims); });
}
Value GraphBuilder::mean(Value x, int axis, bool keepdims) {
  return named(OpKind::Mean, {x},
               [&]() -> Value { return reduction(OpKind::Mean, x, axis, keepdims); });
}

Value GraphBuilder::matmul(Value a, Value b) {
  return named(OpKind::Matmul, {a, b}, [&]() -> Value {
    const TensorSpec& sa = graph_.values_[checked(a, "matmul")].spec;
    const TensorSpec& sb = graph_.values_[checked(b, "matmul")].spec;
    std::string shapes = shape_str(sa.shape) + " @ " + shape_str(sb.shape);
    if (sa.rank() < 2 || sb.rank() < 2)
      throw UserError("matmul: operands need rank >= 2, got " + shapes);
    if (sa.dtype != sb.dtype)
      throw UserError("matmul: dtypes " + std::string(dtype_name(sa.dtype)) + " and " +
                      std::string(dtype_name(sb.dtype)) + " differ");
    require_float(OpKind::Matmul, sa);
    if (sa.shape.back() != sb.shape[sb.rank() - 2])
      throw UserError("matmul: inner dimensions " + std::to_string(sa.shape.back()) + " and " +
                      std::to_string(sb.shape[sb.rank() - 2]) + " differ in " + shapes);
    Shape batch_a(sa.shape.begin(), sa.shape.end() - 2),
        batch_b(sb.shape.begin(), sb.shape.end() - 2);
    std::optional<Shape> out = broadcast_shapes(batch_a, batch_b);
    if (!out) throw UserError("matmul: batch dimensions do not broadcast in " + shapes);
    out->push_back(sa.shape[sa.rank() - 2]);
    out->push_back(sb.shape.back());
    return record(OpKind::Matmul, {a, b}, TensorSpec(*out, sa.dtype));
  });
}

Value GraphBuilder::transpose(Value x, int axis0, int axis1) {
  return named(OpKind::Transpose, {x}, [&]() -> Value {
    TensorSpec s = graph_.values_[checked(x, "transpose")].spec;
    if (s.rank() < 2)
      throw UserError("transpose: expects rank >= 2, got shape " + shape_str(s.shape));
    int64_t a = normalise_axis(OpKind::Transpose, s, axis0);
    int64_t b = normalise_axis(OpKind::Transpose, s, axis1);
    if (a == b)
      throw UserError("transpose: axis0 and axis1 are both axis " + std::to_string(a) +
                      " of shape " + shape_str(s.shape));
    if (a > b) std::swap(a, b);
    std::swap(s.shape[a], s.shape[b]);
    std::map<std::string, AttrValue> attrs;
    if (a != s.rank() - 2 || b != s.rank() - 1) attrs = {{"axis0", a}, {"axis1", b}};
    return record(OpKind::Transpose, {x}, s, attrs);
  });
}

Value GraphBuilder::reshape(Value x, const Shape& shape) {
  return named(OpKind::Reshape, {x}, [&]() -> Value {
    const TensorSpec& s = graph_.values_[checked(x, "reshape")].spec;
    Shape out = shape;
    int64_t known = 1;
    int inferred = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == -1 && inferred < 0) {
        inferred = static_cast<int>(i);
      } else if (out[i] <= 0) {
        throw UserError("reshape: dimensions of " + shape_str(shape) +
                        " must be positive (one may be -1)");
      } else {
        known *= out[i];
      }
    }
    if (inferred >= 0 && s.num_elements() % known == 0) out[inferred] = s.num_elements() / known;
    TensorSpec result(out, s.dtype);
    if (result.num_elements() != s.num_elements())
      throw UserError("reshape: " + shape_str(s.shape) + " (" + std::to_string(s.num_elements()) +
                      " elements) cannot become " + shape_str(shape));
    std::map<std::string, AttrValue> attrs;
    for (size_t i = 0; i < out.size(); ++i) attrs["d" + std::to_string(i)] = out[i];
    return record(OpKind::Reshape, {x}, result, attrs);
  });
}

Value GraphBuilder::slice(Value x, int axis, int64_t start, int64_t stop) {
  return named(OpKind::Slice, {x}, [&]() -> Value {
    TensorSpec s = graph_.values_[checked(x, "slice")].spec;
    int64_t a = normalise_axis(OpKind::Slice, s, axis);
    if (start < 0 || stop <= start || stop > s.shape[a])
      throw UserError("slice: [" + std::to_string(start) + ":" + std::to_string(stop) +
                      "] of axis " + std::to_string(a) + " of " + shape_str(s.shape) +
                      " is empty or out of range");
    s.shape[a] = stop - start;
    return record(OpKind::Slice, {x}, s, {{"axis", a}, {"start", start}, {"stop", stop}});
  });
}

Value GraphBuilder::concat(const std::vector<Value>& parts, int axis) {
  return named(OpKind::Concat, parts, [&]() -> Value {
    if (parts.size() < 2)
      throw UserError("concat: needs at least two operands, got " + std::to_string(parts.size()));
    TensorSpec s = graph_.values_[checked(parts[0], "concat")].spec;
    int64_t a = normalise_axis(OpKind::Concat, s, axis);
    for (size_t i = 1; i < parts.size(); ++i) {
      const TensorSpec& p = graph_.values_[checked(parts[i], "concat")].spec;
      Shape other = p.shape, first = s.shape;
      bool same = p.rank() == s.rank();
      if (same) other[a] = first[a] = 0;
      if (!same || other != first || p.dtype != s.dtype)
        throw UserError("concat: operand " + std::to_string(i) + " " + p.str() +
                        " does not match operand 0 " + graph_.values_[parts[0].id].spec.str() +
                        " but along axis " + std::to_string(a));
      s.shape[a] += p.shape[a];
    }
    std::vector<Value> operands(parts.begin(), parts.end());
    return record(OpKind::Concat, operands, s, {{"axis", a}});
  });
}

Value GraphBuilder::rotary(Value x, Value cos, Value sin) {
  return named(OpKind::Rotary, {x, cos, sin}, [&]() -> Value {
    const TensorSpec& sx = graph_.values_[checked(x, "rotary")].spec;
    const TensorSpec& sc = graph_.values_[checked(cos, "rotary")].spec;
    const TensorSpec& ss = graph_.values_[checked(sin, "rotary")].spec;
    require_float(OpKind::Rotary, sx);
    if (sx.rank() < 2 || sx.shape.back() % 2 != 0)
      throw UserError("rotary: x must be (..., T, D) with D even, got " + shape_str(sx.shape));
    int64_t t = sx.shape[sx.rank() - 2], half = sx.shape.back() / 2;
    TensorSpec want(Shape{t, half}, sx.dtype);
    if (!(sc == want) || !(ss == want))
      throw UserError("rotary: cos and sin must be " + want.str() + " for x " + sx.str() +
                      ", got " + sc.str() + " and " + ss.str());
    return record(OpKind::Rotary, {x, cos, sin}, sx);
  });
}

Value GraphBuilder::embedding(Value table, Value ids) {
  return named(OpKind::Embedding, {table, ids}, [&]() -> Value {
    const TensorSpec& st = graph_.values_[checked(table, "embedding")].spec;
    const TensorSpec& si = graph_.values_[checked(ids, "embedding")].spec;
    if (st.rank() != 2 || !is_float(st.dtype))
      throw UserError("embedding: table must be a 2-D float tensor (V, H), got " + st.str());
    if (si.dtype != DType::i32) throw UserError("embedding: ids must be i32, got " + si.str());
    Shape out = si.shape;
    out.push_back(st.shape[1]);
    return record(OpKind::Embedding, {table, ids}, TensorSpec(out, st.dtype));
  });
}

Value GraphBuilder::cache_update(Value cache, Value update, Value position, bool in_place) {
  return named(OpKind::CacheUpdate, {cache, update, position}, [&]() -> Value {
    const TensorSpec& sc = graph_.values_[checked(cache, "cache_update")].spec;
    const TensorSpec& su = graph_.values_[checked(update, "cache_update")].spec;
    const TensorSpec& sp = graph_.values_[checked(position, "cache_update")].spec;
    int r = sc.rank();
    bool fits =
        r >= 2 && su.rank() == r && su.dtype == sc.dtype && su.shape.back() == sc.shape.back() &&
        su.shape[r - 2] <= sc.shape[r - 2] &&
        Shape(su.shape.begin(), su.shape.end() - 2) == Shape(sc.shape.begin(), sc.shape.end() - 2);
    if (!fits)
      throw UserError("cache_update: new " + su.str() + " must be (..., T, D) with cache " +
                      sc.str() + "'s batch dimensions, D and dtype, and T <= S");
    if (!(sp == TensorSpec(Shape{1}, DType::i32)))
      throw UserError("cache_update: position must be (1,) i32, got " + sp.str());
    if (!in_place) return record(OpKind::CacheUpdate, {cache, update, position}, sc);
    const ValueInfo& written = graph_.values_[cache.id];
    if (written.producer >= 0)
      throw UserError(
          "cache_update: in_place writes the cache where it lives, so the cache must "
          "be a graph input; " +
          written.ref() + " is an op's result");
    return record(OpKind::CacheUpdate, {cache, update, position}, sc, {{"in_place", int64_t{1}}});
  });
}

Value GraphBuilder::flash_attention(Value q, Value kt, Value v, double scale, bool causal,
                                    discovery::Certificate certificate) {
  return named(OpKind::FlashAttention, {q, kt, v}, [&]() -> Value {
    const TensorSpec& sq = graph_.values_[checked(q, "flash_attention")].spec;
    const TensorSpec& sk = graph_.values_[checked(kt, "flash_attention")].spec;
    const TensorSpec& sv = graph_.values_[checked(v, "flash_attention")].spec;
    std::string shapes =
        "q " + shape_str(sq.shape) + ", kt " + shape_str(sk.shape) + ", v " + shape_str(sv.shape);
    if (sq.rank() < 2 || sk.rank() != sq.rank() || sv.rank() != sq.rank())
      throw UserError("flash_attention: q, kt and v need one rank >= 2, got " + shapes);
    if (sq.dtype != sk.dtype || sq.dtype != sv.dtype)
      throw UserError("flash_attention: q, kt and v need one dtype (" + shapes + ")");
    require_float(OpKind::FlashAttention, sq);
    int r = sq.rank();
    Shape batch(sq.shape.begin(), sq.shape.end() - 2);
    if (!attention_batch_fits(sq, sk, sv) || sk.shape[r - 2] != sq.shape[r - 1] ||
        sv.shape[r - 2] != sk.shape[r - 1])
      throw UserError(
          "flash_attention: expects q (..., L, D), kt (..., D, S), v (..., S, E) with the batch "
          "dimensions of kt and v equal to q's or 1 (grouped-query heads), got " +
          shapes);
    if (certificate.obligations.size() != std::size(discovery::kObligations))
      throw UserError("flash_attention: the certificate of law '" + certificate.law +
                      "' does not discharge every obligation");
    Shape out = batch;
    out.push_back(sq.shape[r - 2]);
    out.push_back(sv.shape[r - 1]);
    int64_t index = static_cast<int64_t>(graph_.certificates_.size());
    graph_.certificates_.push_back(std::move(certificate));
    return record(OpKind::FlashAttention, {q, kt, v}, TensorSpec(out, sq.dtype),
                  {{"scale", scale}, {"causal", int64_t{causal}}, {"certificate", index}});
  });
}

Value GraphBuilder::copy_op(const Graph& source, const Op& op, const std::vector<Value>& in) {
  auto axis = [&] { return static_cast<int>(op.int_attr("axis")); };
  auto keepdims = [&] { return op.int_attr("keepdims") != 0; };
  switch (op.kind) {
    case OpKind::Add:
      return add(in[0], in[1]);
    case OpKind::Subtract:
      return subtract(in[0], in[1]);
    case OpKind::Multiply:
      return multiply(in[0], in[1]);
    case OpKind::Divide:
      return divide(in[0], in[1]);
    case OpKind::Scale:
      return scale(in[0], op.float_attr("factor"));
    case OpKind::Exp:
      return exp(in[0]);
    case OpKind::Silu:
      return silu(in[0]);
    case OpKind::CausalMask:
      return causal_mask(in[0]);
    case OpKind::RmsNorm:
      return rms_norm(in[0], in[1], op.float_attr("eps"));
    case OpKind::Softmax:
      return softmax(in[0], axis());
    case OpKind::Sum:
      return sum(in[0], axis(), keepdims());
    case OpKind::Max:
      return max(in[0], axis(), keepdims());
    case OpKind::Mean:
      return mean(in[0], axis(), keepdims());
    case OpKind::Matmul:
      return matmul(in[0], in[1]);
    case OpKind::Cast: {
      int64_t code = op.int_attr("dtype");
      if (code < 0 || code > static_cast<int64_t>(DType::i32))
        throw UserError("cast: dtype code " + std::to_string(code) + " is not 0 (f16), 1 (bf16), " +
                        "2 (f32) or 3 (i32)");
      return cast(in[0], static_cast<DType>(code));
    }
    case OpKind::Transpose:
      if (op.attrs.count("axis0"))
        return transpose(in[0], static_cast<int>(op.int_attr("axis0")),
                         static_cast<int>(op.int_attr("axis1")));
      return transpose(in[0]);
    case OpKind::Reshape: {
      Shape shape;
      while (op.attrs.count("d" + std::to_string(shape.size())))
        shape.push_back(op.int_attr("d" + std::to_string(shape.size())));
      return reshape(in[0], shape);
    }
    case OpKind::Slice:
      return slice(in[0], axis(), op.int_attr("start"), op.int_attr("stop"));
    case OpKind::Concat:
      return concat(in, axis());
    case OpKind::Rotary:
      return rotary(in[0], in[1], in[2]);
    case OpKind::Embedding:
      return embedding(in[0], in[1]);
    case OpKind::CacheUpdate:
      return cache_update(in[0], in[1], in[2],
                          op.attrs.count("in_place") && op.int_attr("in_place") != 0);
    case OpKind::FlashAttention:
      return flash_attention(in[0], in[1], in[2], op.float_attr("scale"),
                             op.int_attr("causal") != 0,
                             source.certificates().at(op.int_attr("certificate")));
  }
  throw InternalError("copy_op: unknown op kind");
}

Graph GraphBuilder::build(const std::vector<Value>& outputs) const {
  if (outputs.empty()) throw UserError("build: a graph needs at least one output");
  Graph g = graph_;
  for (Value v : outputs) {
    int id = checked(v, "build");
    const ValueInfo& info = g.values_[id];
    if (info.producer < 0)
      throw UserError("build: output " + info.ref() +
                      " is a graph input; outputs must be op results");
    if (g.is_output(id)) throw UserError("build: output " + info.ref() + " is listed twice");
    g.outputs_.push_back(id);
  }
  // Walk backwards from the outputs: every op must feed one (ops are topologically ordered).
  std::vector<char> live(g.ops_.size(), 0);
  for (int v : g.outputs_) live[g.values_[v].producer] = 1;
  for (int o = static_cast<int>(g.ops_.size()) - 1; o >= 0; --o) {
    if (!live[o]) {
      const Op& dead = g.ops_[o];
      throw UserError("build: " + g.values_[dead.output].ref() + " = " + std::string(dead.name()) +
                      "(...) does not contribute to any output; list it as an output or remove it");
    }
    for (int p : g.producers(o)) live[p] = 1;
  }
  return g;
}

}  // namespace metile::graph
