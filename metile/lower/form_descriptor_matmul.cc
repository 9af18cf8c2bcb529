#include "metile/lower/form_descriptor_matmul.h"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "metile/ir/printer.h"
#include "metile/support/errors.h"

namespace metile::lower {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

// Why a kernel is not a descriptor GEMM: the op that does not fit (nullptr: the kernel as a
// whole) and the rule.
struct Mismatch {
  const Op* op = nullptr;
  std::string why;
};

struct Match {
  size_t loop = 0, store = 0;  // indices in the kernel's top-level block
  const Op* dot = nullptr;
  std::vector<ValueId> operands;    // descriptor_matmul's, row0 and column0 last (kNoValue: 0)
  std::vector<const Op*> epilogue;  // in program order
  ValueId stored = ir::kNoValue;
};

class Matcher {
 public:
  explicit Matcher(const ir::Kernel& k) : k_(k), names_(ir::printed_value_names(k)) {
    ir::walk(k.body, [&](const Op& op) {
      for (ValueId r : op.results) definer_[r] = &op;
      for (ValueId v : op.operands) ++uses_[v];
    });
    for (const ir::Param& p : k.params) params_.insert(p.value);
  }

  // The descriptor GEMM of the kernel, or why there is none.
  std::variant<Match, Mismatch> match() {
    const std::vector<Op>& ops = k_.body.ops;
    std::optional<size_t> loop;
    for (size_t i = 0; i < ops.size(); ++i) {
      bool has_dot = false;
      for (const ir::Block& region : ops[i].regions)
        ir::walk(region, [&](const Op& op) { has_dot = has_dot || op.kind == OpKind::Dot; });
      if (ops[i].kind == OpKind::Dot)
        return Mismatch{&ops[i],
                        "is a dot outside a K loop; the tensor backend lowers the "
                        "descriptor GEMM's tile_range over K"};
      if (!has_dot) continue;
      if (loop || ops[i].kind != OpKind::For)
        return Mismatch{&ops[i], loop ? "is a second matrix product; the tensor backend lowers "
                                        "one descriptor GEMM per kernel"
                                      : "holds a dot but is no top-level K loop"};
      loop = i;
    }
    if (!loop) return Mismatch{nullptr, "the kernel has no K loop of metile.dot"};
    Match m;
    m.loop = *loop;
    if (auto bad = match_loop(ops[*loop], m)) return *bad;
    if (auto bad = match_store(*loop, m)) return *bad;
    return m;
  }

  std::string describe(const Op* op) const {
    if (!op) return "";
    std::string text = std::string(ir::op_name(op->kind));
    if (!op->results.empty()) text = names_[op->results[0]] + " = " + text;
    return "'" + text + "'" + (op->loc.known() ? " at " + op->loc.str() : "");
  }

  const std::string& name(ValueId v) const { return names_[v]; }
  bool is_param(ValueId v) const { return params_.count(v) != 0; }

 private:
  const Op* def(ValueId v) const {
    const auto it = definer_.find(v);
    return it == definer_.end() ? nullptr : it->second;
  }

  std::optional<int64_t> constant_int(ValueId v) const {
    const Op* op = def(v);
    if (!op || op->kind != OpKind::Constant) return std::nullopt;
    const int64_t* i = std::get_if<int64_t>(&op->attrs.at("value"));
    return i ? std::optional<int64_t>(*i) : std::nullopt;
  }

  bool is_zero_splat(ValueId v) const {
    const Op* op = def(v);
    if (!op || op->kind != OpKind::Splat) return false;
    const Op* c = def(op->operands[0]);
    if (!c || c->kind != OpKind::Constant) return false;
    const ir::Attr& value = c->attrs.at("value");
    if (const double* d = std::get_if<double>(&value)) return *d == 0.0;
    const int64_t* i = std::get_if<int64_t>(&value);
    return i && *i == 0;
  }

  // The 1-D tile a 2-D coordinate broadcasts along `dim` (0: rows vary, 1: columns vary):
  // broadcast(expand_dims(v, 1 - dim)).
  ValueId coordinate_vector(ValueId coordinate, int dim) const {
    const Op* op = def(coordinate);
    if (op && op->kind == OpKind::Broadcast) op = def(op->operands[0]);
    if (!op || op->kind != OpKind::ExpandDims || op->int_attr("axis") != 1 - dim)
      return ir::kNoValue;
    return op->operands[0];
  }

  // The scalar s of `s + arange(0, length)` (either order; a bare arange is s = 0, kNoValue
  // here); nullopt when `v` is not of that form.
  std::optional<ValueId> offset_of(ValueId v, int64_t length) const {
    const auto is_arange = [&](ValueId t) {
      const Op* op = def(t);
      return op && op->kind == OpKind::Arange && op->int_attr("start") == 0 &&
             op->int_attr("end") == length;
    };
    if (v == ir::kNoValue) return std::nullopt;
    if (is_arange(v)) return ir::kNoValue;
    const Op* add = def(v);
    if (!add || add->kind != OpKind::Add) return std::nullopt;
    for (int i : {0, 1}) {
      const Op* splat = def(add->operands[static_cast<size_t>(i)]);
      if (is_arange(add->operands[static_cast<size_t>(1 - i)]) && splat &&
          splat->kind == OpKind::Splat && k_.type(splat->operands[0]).is_scalar())
        return splat->operands[0];
    }
    return std::nullopt;
  }

  // A row-major rank-2 descriptor: (base, rows, columns, row stride), or why not.
  std::optional<Mismatch> descriptor(ValueId desc, std::array<ValueId, 4>& out) const {
    const Op* op = def(desc);
    if (!op || op->kind != OpKind::MakeTensor || op->operands.size() != 5)
      return Mismatch{op, "is no rank-2 make_tensor, which the tensor backend's views need"};
    if (constant_int(op->operands[4]) != 1)
      return Mismatch{op,
                      "has a column stride other than 1; the tensor backend reads "
                      "row-major views with unit inner stride"};
    out = {op->operands[0], op->operands[1], op->operands[2], op->operands[3]};
    return std::nullopt;
  }

  std::optional<Mismatch> match_loop(const Op& loop, Match& m) {
    const ir::Block& body = loop.regions[0];
    if (loop.operands.size() != 4)
      return Mismatch{&loop, "carries " + std::to_string(loop.operands.size() - 3) +
                                 " values; the tensor backend lowers one matrix recurrence (a "
                                 "K loop carrying only the accumulator)"};
    if (constant_int(loop.operands[0]) != 0)
      return Mismatch{&loop, "does not start at 0; the tensor backend reduces over all of K"};
    const std::optional<int64_t> step = constant_int(loop.operands[2]);
    if (!is_zero_splat(loop.operands[3]))
      return Mismatch{&loop, "starts its accumulator at a value other than zeros"};
    for (const Op& op : body.ops) {
      if (op.kind == OpKind::Dot) {
        if (m.dot) return Mismatch{&op, "is a second dot in the K loop"};
        m.dot = &op;
        continue;
      }
      if (op.kind == OpKind::TensorLoad || op.kind == OpKind::Yield) continue;
      if (!ir::op_info(op.kind).has(ir::Trait::Pure) || !op.regions.empty())
        return Mismatch{&op,
                        "sits in the K loop; the tensor backend's loop holds only the two "
                        "operand loads, their coordinates and the dot"};
    }
    const Op& yield = body.ops.back();
    if (yield.operands[0] != m.dot->results[0] || m.dot->operands[2] != body.args[1] ||
        uses_[body.args[1]] != 1 || uses_[m.dot->results[0]] != 1)
      return Mismatch{m.dot, "is not the loop's recurrence acc = dot(a, b, acc)"};
    const ir::Type& acc = k_.type(m.dot->operands[2]);
    const int64_t bm = acc.shape[0], bn = acc.shape[1];
    const int64_t bk = k_.type(m.dot->operands[0]).shape[1];
    if (step != bk)
      return Mismatch{&loop, "steps by other than the dot's K extent " + std::to_string(bk)};
    const Op* a = def(m.dot->operands[0]);
    const Op* b = def(m.dot->operands[1]);
    for (const Op* load : {a, b})
      if (!load || load->kind != OpKind::TensorLoad || load->operands.size() != 3)
        return Mismatch{load ? load : m.dot,
                        "is no 2-D tensor descriptor load; the tensor backend reads its "
                        "operands through descriptors"};
    std::array<ValueId, 4> da{}, db{};
    if (auto bad = descriptor(a->operands[0], da)) return bad;
    if (auto bad = descriptor(b->operands[0], db)) return bad;
    const ValueId iv = body.args[0];
    const auto k_offset = [&](ValueId coordinate, int dim) {
      const std::optional<ValueId> s = offset_of(coordinate_vector(coordinate, dim), bk);
      return s && *s == iv;
    };
    const std::optional<ValueId> row0 = offset_of(coordinate_vector(a->operands[1], 0), bm);
    const std::optional<ValueId> column0 = offset_of(coordinate_vector(b->operands[2], 1), bn);
    if (!row0 || !k_offset(a->operands[2], 1))
      return Mismatch{a,
                      "does not read rows row0 + arange(BLOCK_M) and columns k + "
                      "arange(BLOCK_K) of the K loop's k"};
    if (!column0 || !k_offset(b->operands[1], 0))
      return Mismatch{b,
                      "does not read rows k + arange(BLOCK_K) of the K loop's k and columns "
                      "column0 + arange(BLOCK_N)"};
    if (da[2] != loop.operands[1] || db[1] != loop.operands[1])
      return Mismatch{&loop, "does not run to the inner extent of both operand descriptors"};
    m.operands = {da[0], db[0], ir::kNoValue, da[1], db[2],   da[2],
                  da[3], db[3], ir::kNoValue, *row0, *column0};
    return std::nullopt;
  }

  std::optional<Mismatch> match_store(size_t loop_index, Match& m) {
    const std::vector<Op>& ops = k_.body.ops;
    const ValueId acc = ops[loop_index].results[0];
    // The epilogue: the store's value back to the accumulator through pointwise tile ops.
    std::optional<size_t> store;
    for (size_t i = loop_index + 1; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (!ir::op_info(op.kind).has(ir::Trait::WritesMemory)) continue;
      if (op.kind != OpKind::TensorStore || !reaches(op.operands.back(), acc)) continue;
      if (store)
        return Mismatch{&op,
                        "is a second output store of the accumulator; the tensor "
                        "backend's epilogue has one"};
      store = i;
    }
    if (!store) return Mismatch{&ops[loop_index], "has no tensor_store of its accumulator"};
    const Op& st = ops[*store];
    if (st.operands.size() != 4) return Mismatch{&st, "is no 2-D tensor descriptor store"};
    std::array<ValueId, 4> dc{};
    if (auto bad = descriptor(st.operands[0], dc)) return bad;
    const ir::Type& acc_type = k_.type(acc);
    const std::optional<ValueId> row0 =
        offset_of(coordinate_vector(st.operands[1], 0), acc_type.shape[0]);
    const std::optional<ValueId> column0 =
        offset_of(coordinate_vector(st.operands[2], 1), acc_type.shape[1]);
    if (!row0 || !column0 || *row0 != m.operands[9] || *column0 != m.operands[10])
      return Mismatch{&st,
                      "does not store the product's own tile (rows row0 + arange(BLOCK_M), "
                      "columns column0 + arange(BLOCK_N))"};
    if (dc[1] != m.operands[3] || dc[2] != m.operands[4])
      return Mismatch{&st,
                      "stores through a descriptor whose extents are not the operands' "
                      "rows and columns"};
    m.operands[2] = dc[0];
    m.operands[8] = dc[3];
    m.store = *store;
    m.stored = st.operands.back();
    std::set<ValueId> inside;
    if (auto bad = collect_epilogue(m.stored, acc, inside, m)) return bad;
    // The epilogue's values feed only the epilogue and the store: nothing else may lose them.
    std::map<ValueId, int> epilogue_uses;
    for (const Op* op : m.epilogue)
      for (ValueId v : op->operands) ++epilogue_uses[v];
    ++epilogue_uses[m.stored];
    for (const Op* op : m.epilogue)
      if (op->kind != OpKind::Splat && uses_[op->results[0]] != epilogue_uses[op->results[0]])
        return Mismatch{op,
                        "is used outside the epilogue; the tensor backend's accumulator "
                        "never leaves it"};
    if (uses_[acc] != epilogue_uses[acc])
      return Mismatch{&ops[loop_index], "'s accumulator is used outside the epilogue"};
    return std::nullopt;
  }

  bool reaches(ValueId v, ValueId acc) const {
    if (v == acc) return true;
    const Op* op = def(v);
    if (!op || op->kind == OpKind::For) return false;
    for (ValueId operand : op->operands)
      if (k_.type(operand).is_tile() && reaches(operand, acc)) return true;
    return false;
  }

  // The pure pointwise ops between the accumulator and `v`, or the one that is not.
  std::optional<Mismatch> collect_epilogue(ValueId v, ValueId acc, std::set<ValueId>& seen,
                                           Match& m) {
    if (v == acc || !seen.insert(v).second) return std::nullopt;
    const Op* op = def(v);
    if (!op) return Mismatch{nullptr, "the stored value depends on " + name(v)};
    if (op->kind == OpKind::Splat) {
      if (auto bad = scalar_leaf(op)) return bad;
      m.epilogue.push_back(op);
      return std::nullopt;
    }
    if (auto bad = pointwise(*op)) return bad;
    for (ValueId operand : op->operands)
      if (auto bad = collect_epilogue(operand, acc, seen, m)) return bad;
    m.epilogue.push_back(op);
    return std::nullopt;
  }

  // A memory read, reduction, control flow or product that a reshaping op (broadcast,
  // expand_dims, ...) carries into the epilogue: the op to name.
  const Op* underlying(const Op& op) const {
    for (ValueId v : op.operands) {
      const Op* d = def(v);
      if (!d) continue;
      const OpKind k = d->kind;
      if (k == OpKind::Load || k == OpKind::TensorLoad || k == OpKind::Reduce ||
          k == OpKind::ReduceAxis || k == OpKind::Scan || k == OpKind::For || k == OpKind::If ||
          k == OpKind::Dot)
        return d;
      if (const Op* below = underlying(*d)) return below;
    }
    return nullptr;
  }

  std::optional<Mismatch> pointwise(const Op& given) const {
    const Op* below = ir::is_elementwise(given.kind) ? nullptr : underlying(given);
    const Op& op = below ? *below : given;
    const OpKind k = op.kind;
    if (k == OpKind::Load || k == OpKind::TensorLoad)
      return Mismatch{&op,
                      "reads memory; an epilogue holds pointwise operations of the "
                      "accumulator and scalars only"};
    if (k == OpKind::Reduce || k == OpKind::ReduceAxis || k == OpKind::Scan)
      return Mismatch{&op, "is a reduction; an epilogue is pointwise"};
    if (k == OpKind::For || k == OpKind::If)
      return Mismatch{&op, "is control flow; an epilogue is straight-line pointwise code"};
    if (k == OpKind::Dot)
      return Mismatch{&op, "is a second matrix product; an epilogue is pointwise"};
    if (!ir::is_elementwise(k) || ir::is_bitwise(k))
      return Mismatch{&op,
                      "is not a pointwise operation the epilogue supports (arithmetic, "
                      "comparisons, selections, float casts, unary math)"};
    const ir::Type& t = k_.type(op.results[0]);
    if (k == OpKind::Cast &&
        (!ir::is_float(t.dtype) || !ir::is_float(k_.type(op.operands[0]).dtype)))
      return Mismatch{&op, "is a cast between " +
                               std::string(ir::dtype_name(k_.type(op.operands[0]).dtype)) +
                               " and " + std::string(ir::dtype_name(t.dtype)) +
                               "; the epilogue converts between float types only"};
    return std::nullopt;
  }

  // A splat's scalar: a constant or a runtime scalar parameter, not a dimension.
  std::optional<Mismatch> scalar_leaf(const Op* splat) const {
    ValueId s = splat->operands[0];
    const Op* op = def(s);
    if (op && op->kind == OpKind::Constant) return std::nullopt;
    if (op && op->kind == OpKind::Cast && is_param(op->operands[0]) &&
        is_dimension(op->operands[0]))
      s = op->operands[0];  // a dimension converted to float is still a dimension
    if (!is_param(s))
      return Mismatch{op ? op : splat,
                      "computes an epilogue scalar; its leaves are constants "
                      "and runtime scalar parameters only"};
    if (is_dimension(s))
      return Mismatch{splat, "uses the dimension parameter " + name(s) +
                                 " as an epilogue scalar, which static specialization and "
                                 "dimension aliasing do not preserve on every backend"};
    return std::nullopt;
  }

  // Whether a parameter sizes a descriptor or bounds a loop.
  bool is_dimension(ValueId s) const {
    bool used = false;
    ir::walk(k_.body, [&](const Op& op) {
      if (op.kind == OpKind::MakeTensor)
        for (size_t i = 1; i < op.operands.size(); ++i) used = used || op.operands[i] == s;
      if (op.kind == OpKind::For)
        for (size_t i = 0; i < 3; ++i) used = used || op.operands[i] == s;
    });
    return used;
  }

  const ir::Kernel& k_;
  std::vector<std::string> names_;
  std::map<ValueId, const Op*> definer_;
  std::map<ValueId, int> uses_;
  std::set<ValueId> params_;
};

// The report's record of an epilogue: its ops in order, the parameters it reads and the
// output conversion.
FusedEpilogue describe(const ir::Kernel& k, const Matcher& matcher, const Match& m) {
  FusedEpilogue e;
  const Op& store = k.body.ops[m.store];
  e.store = matcher.describe(&store);
  std::set<ValueId> parameters;
  for (const Op* op : m.epilogue) {
    if (op->kind != OpKind::Splat) e.ops.push_back(std::string(ir::op_name(op->kind)));
    if (op->kind == OpKind::Splat && matcher.is_param(op->operands[0]))
      parameters.insert(op->operands[0]);
  }
  for (ValueId p : parameters) e.scalar_parameters.push_back(matcher.name(p));
  const ir::DType out = k.type(m.stored).dtype;
  e.output_conversion =
      out == ir::DType::f32 ? "none (f32)" : "f32 -> " + std::string(ir::dtype_name(out));
  e.backend = "simdgroup (the accumulator's registers, after the K loop)";
  return e;
}

ir::Kernel rewrite(ir::Kernel k, const Match& m) {
  const Op& loop = k.body.ops[m.loop];
  const ValueId acc = loop.results[0];
  ir::Block region;
  region.args.push_back(k.new_value(k.type(acc), "acc"));
  std::map<ValueId, ValueId> renamed{{acc, region.args[0]}};
  const auto get = [&](ValueId v) {
    const auto it = renamed.find(v);
    return it == renamed.end() ? v : it->second;
  };
  for (const Op* original : m.epilogue) {
    Op op = *original;
    for (ValueId& v : op.operands) v = get(v);
    for (ValueId& r : op.results) {
      const ValueId fresh = k.new_value(k.type(r));
      renamed[r] = fresh;
      r = fresh;
    }
    region.ops.push_back(std::move(op));
  }
  Op yield;
  yield.kind = OpKind::Yield;
  yield.operands = {get(m.stored)};
  yield.loc = k.body.ops[m.store].loc;
  region.ops.push_back(std::move(yield));

  std::vector<Op> prefix;
  std::vector<ValueId> operands = m.operands;
  for (size_t i : {size_t{9}, size_t{10}})
    if (operands[i] == ir::kNoValue) {
      Op zero;
      zero.kind = OpKind::Constant;
      zero.attrs["value"] = int64_t{0};
      zero.results = {k.new_value(ir::Type::scalar(ir::DType::i32))};
      zero.loc = loop.loc;
      operands[i] = zero.results[0];
      prefix.push_back(std::move(zero));
    }
  Op matmul;
  matmul.kind = OpKind::DescriptorMatmul;
  matmul.operands = std::move(operands);
  if (m.dot->has_attr("precision")) matmul.attrs["precision"] = m.dot->str_attr("precision");
  matmul.regions.push_back(std::move(region));
  matmul.loc = loop.loc;

  // The epilogue's ops of the accumulator move into the region; its splats may serve others
  // (dce removes them when they do not).
  std::set<const Op*> moved;
  for (const Op* op : m.epilogue)
    if (op->kind != OpKind::Splat) moved.insert(op);
  std::vector<Op> ops;
  for (size_t i = 0; i < k.body.ops.size(); ++i) {
    if (i == m.loop || moved.count(&k.body.ops[i])) continue;
    if (i == m.store) {
      for (Op& z : prefix) ops.push_back(std::move(z));
      ops.push_back(std::move(matmul));
      continue;
    }
    ops.push_back(std::move(k.body.ops[i]));
  }
  k.body.ops = std::move(ops);
  return k;
}

}  // namespace

bool tensor_backend_wanted(const target::Target& target,
                           const std::optional<schedule::Schedule>& schedule) {
  if (!target.matrix_facilities.has(target::MatrixFacility::AppleTensorOps)) return false;
  const schedule::Schedule s = schedule.value_or(schedule::Schedule{});
  if (s.backend == schedule::Backend::TensorOps) return true;
  return s.backend == schedule::Backend::Auto && !s.vector_width && s.double_buffer != true &&
         s.staging != schedule::Staging::Threadgroup;
}

ir::PassResult form_descriptor_matmul(ir::Kernel tile, const target::Target& target,
                                      const std::optional<schedule::Schedule>& schedule,
                                      std::optional<FusedEpilogue>* unformed,
                                      std::string* declined) {
  bool has_dot = false;
  ir::walk(tile.body, [&](const Op& op) { has_dot = has_dot || op.kind == OpKind::Dot; });
  // Without a dot plan_schedule says what the kernel lacks.
  if (!has_dot) return {std::move(tile), false};
  if (!tensor_backend_wanted(target, schedule)) {
    Matcher matcher(tile);
    std::variant<Match, Mismatch> found = matcher.match();
    if (const Match* m = std::get_if<Match>(&found); m && unformed)
      *unformed = describe(tile, matcher, *m);
    return {std::move(tile), false};
  }
  const bool required = schedule && schedule->backend == schedule::Backend::TensorOps;
  Matcher matcher(tile);
  std::variant<Match, Mismatch> found = matcher.match();
  if (const Mismatch* bad = std::get_if<Mismatch>(&found)) {
    const std::string why = (bad->op ? matcher.describe(bad->op) + " " : std::string()) + bad->why;
    if (!required) {
      if (declined) *declined = why;
      return {std::move(tile), false};
    }
    throw NotSupported(
        "form_descriptor_matmul: Schedule(backend='tensor_ops') cannot lower "
        "kernel '" +
            tile.name + "' on target " + target.name + ": " + why,
        bad->op ? bad->op->loc : SourceLocation{});
  }
  return {rewrite(std::move(tile), std::get<Match>(found)), true};
}

}  // namespace metile::lower
