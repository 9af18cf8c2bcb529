#include "metile/lower/match_descriptor_gemm.h"

#include "metile/ir/printer.h"

namespace metile::lower {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

KernelValues::KernelValues(const ir::Kernel& k) : k_(k), names_(ir::printed_value_names(k)) {
  ir::walk(k.body, [&](const Op& op) {
    for (ValueId r : op.results) definer_[r] = &op;
    for (ValueId v : op.operands) ++uses_[v];
  });
  for (const ir::Param& p : k.params) params_.insert(p.value);
}

const Op* KernelValues::def(ValueId v) const {
  const auto it = definer_.find(v);
  return it == definer_.end() ? nullptr : it->second;
}

int KernelValues::uses(ValueId v) const {
  const auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

std::string KernelValues::describe(const Op* op) const {
  if (!op) return "";
  std::string text = std::string(ir::op_name(op->kind));
  if (!op->results.empty()) text = names_[op->results[0]] + " = " + text;
  return "'" + text + "'" + (op->loc.known() ? " at " + op->loc.str() : "");
}

std::optional<int64_t> KernelValues::constant_int(ValueId v) const {
  const Op* op = def(v);
  if (!op || op->kind != OpKind::Constant) return std::nullopt;
  const int64_t* i = std::get_if<int64_t>(&op->attrs.at("value"));
  return i ? std::optional<int64_t>(*i) : std::nullopt;
}

KRecurrence k_recurrence(const KernelValues& values, const Op& loop) {
  KRecurrence r;
  r.carried = static_cast<int>(loop.operands.size()) - 3;
  const ir::Block& body = loop.regions[0];
  if (r.carried != 1) return r;
  const Op* dot = values.def(body.ops.back().operands[0]);
  if (dot && dot->kind == OpKind::Dot && dot->operands[2] == body.args[1] &&
      values.uses(body.args[1]) == 1 && values.uses(dot->results[0]) == 1)
    r.dot = dot;
  return r;
}

namespace {

class Matcher {
 public:
  explicit Matcher(const KernelValues& values) : v_(values), k_(values.kernel()) {}

  std::variant<DescriptorGemm, GemmMismatch> match() {
    const std::vector<Op>& ops = k_.body.ops;
    std::optional<size_t> loop;
    for (size_t i = 0; i < ops.size(); ++i) {
      bool has_dot = false;
      for (const ir::Block& region : ops[i].regions)
        ir::walk(region, [&](const Op& op) { has_dot = has_dot || op.kind == OpKind::Dot; });
      if (ops[i].kind == OpKind::Dot)
        return GemmMismatch{&ops[i],
                            "is a dot outside a K loop; the tensor backend lowers the "
                            "descriptor GEMM's tile_range over K"};
      if (!has_dot) continue;
      if (loop || ops[i].kind != OpKind::For)
        return GemmMismatch{&ops[i], loop ? "is a second matrix product; the tensor backend "
                                            "lowers one descriptor GEMM per kernel"
                                          : "holds a dot but is no top-level K loop"};
      loop = i;
    }
    if (!loop) return GemmMismatch{nullptr, "the kernel has no K loop of metile.dot"};
    DescriptorGemm m;
    m.loop = *loop;
    if (auto bad = match_loop(ops[*loop], m)) return *bad;
    if (auto bad = match_store(m)) return *bad;
    return m;
  }

 private:
  const Op* def(ValueId v) const { return v_.def(v); }

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

  std::optional<GemmMismatch> descriptor(ValueId desc, DescriptorView& out) const {
    const Op* op = def(desc);
    if (!op || op->kind != OpKind::MakeTensor || op->operands.size() != 5)
      return GemmMismatch{op, "is no rank-2 make_tensor, which the tensor backend's views need"};
    if (v_.constant_int(op->operands[4]) != 1)
      return GemmMismatch{op,
                          "has a column stride other than 1; the tensor backend reads "
                          "row-major views with unit inner stride"};
    out = {op->operands[0], op->operands[1], op->operands[2], op->operands[3]};
    return std::nullopt;
  }

  std::optional<GemmMismatch> match_loop(const Op& loop, DescriptorGemm& m) {
    const ir::Block& body = loop.regions[0];
    const KRecurrence recurrence = k_recurrence(v_, loop);
    if (recurrence.carried != 1)
      return GemmMismatch{&loop, "carries " + std::to_string(recurrence.carried) +
                                     " values; the tensor backend lowers one matrix recurrence "
                                     "(a K loop carrying only the accumulator)"};
    if (v_.constant_int(loop.operands[0]) != 0)
      return GemmMismatch{&loop, "does not start at 0; the tensor backend reduces over all of K"};
    if (!is_zero_splat(loop.operands[3]))
      return GemmMismatch{&loop, "starts its accumulator at a value other than zeros"};
    const Op* dot = nullptr;
    for (const Op& op : body.ops) {
      if (op.kind == OpKind::Dot) {
        if (dot) return GemmMismatch{&op, "is a second dot in the K loop"};
        dot = &op;
        continue;
      }
      if (op.kind == OpKind::TensorLoad || op.kind == OpKind::Yield) continue;
      if (!ir::op_info(op.kind).has(ir::Trait::Pure) || !op.regions.empty())
        return GemmMismatch{&op,
                            "sits in the K loop; the tensor backend's loop holds only the two "
                            "operand loads, their coordinates and the dot"};
    }
    if (!recurrence.dot || recurrence.dot != dot)
      return GemmMismatch{dot, "is not the loop's recurrence acc = dot(a, b, acc)"};
    m.dot = dot;
    const ir::Type& acc = k_.type(dot->operands[2]);
    const int64_t bm = acc.shape[0], bn = acc.shape[1];
    const int64_t bk = k_.type(dot->operands[0]).shape[1];
    if (v_.constant_int(loop.operands[2]) != bk)
      return GemmMismatch{&loop, "steps by other than the dot's K extent " + std::to_string(bk)};
    const Op* a = def(dot->operands[0]);
    const Op* b = def(dot->operands[1]);
    for (const Op* load : {a, b})
      if (!load || load->kind != OpKind::TensorLoad || load->operands.size() != 3)
        return GemmMismatch{load ? load : dot,
                            "is no 2-D tensor descriptor load; the tensor backend reads its "
                            "operands through descriptors"};
    if (auto bad = descriptor(a->operands[0], m.a)) return bad;
    if (auto bad = descriptor(b->operands[0], m.b)) return bad;
    const ValueId iv = body.args[0];
    const auto k_offset = [&](ValueId coordinate, int dim) {
      const std::optional<ValueId> s = offset_of(coordinate_vector(coordinate, dim), bk);
      return s && *s == iv;
    };
    const std::optional<ValueId> row0 = offset_of(coordinate_vector(a->operands[1], 0), bm);
    const std::optional<ValueId> column0 = offset_of(coordinate_vector(b->operands[2], 1), bn);
    if (!row0 || !k_offset(a->operands[2], 1))
      return GemmMismatch{a,
                          "does not read rows row0 + arange(BLOCK_M) and columns k + "
                          "arange(BLOCK_K) of the K loop's k"};
    if (!column0 || !k_offset(b->operands[1], 0))
      return GemmMismatch{b,
                          "does not read rows k + arange(BLOCK_K) of the K loop's k and columns "
                          "column0 + arange(BLOCK_N)"};
    if (m.a.columns != loop.operands[1] || m.b.rows != loop.operands[1])
      return GemmMismatch{&loop, "does not run to the inner extent of both operand descriptors"};
    m.row0 = *row0;
    m.column0 = *column0;
    m.accumulator = loop.results[0];
    return std::nullopt;
  }

  // Whether `v` is computed from the accumulator by top-level tile ops.
  bool reaches(ValueId v, ValueId acc) const {
    if (v == acc) return true;
    const Op* op = def(v);
    if (!op || op->kind == OpKind::For) return false;
    for (ValueId operand : op->operands)
      if (k_.type(operand).is_tile() && reaches(operand, acc)) return true;
    return false;
  }

  std::optional<GemmMismatch> match_store(DescriptorGemm& m) {
    const std::vector<Op>& ops = k_.body.ops;
    std::optional<size_t> store;
    for (size_t i = m.loop + 1; i < ops.size(); ++i) {
      const Op& op = ops[i];
      if (!ir::op_info(op.kind).has(ir::Trait::WritesMemory)) continue;
      if (op.kind != OpKind::TensorStore || !reaches(op.operands.back(), m.accumulator)) continue;
      if (store)
        return GemmMismatch{&op,
                            "is a second output store of the accumulator; the tensor "
                            "backend's epilogue has one"};
      store = i;
    }
    if (!store) return GemmMismatch{&ops[m.loop], "has no tensor_store of its accumulator"};
    const Op& st = ops[*store];
    if (st.operands.size() != 4) return GemmMismatch{&st, "is no 2-D tensor descriptor store"};
    if (auto bad = descriptor(st.operands[0], m.c)) return bad;
    const ir::Type& acc_type = k_.type(m.accumulator);
    const std::optional<ValueId> row0 =
        offset_of(coordinate_vector(st.operands[1], 0), acc_type.shape[0]);
    const std::optional<ValueId> column0 =
        offset_of(coordinate_vector(st.operands[2], 1), acc_type.shape[1]);
    if (!row0 || !column0 || *row0 != m.row0 || *column0 != m.column0)
      return GemmMismatch{&st,
                          "does not store the product's own tile (rows row0 + arange(BLOCK_M), "
                          "columns column0 + arange(BLOCK_N))"};
    if (m.c.rows != m.a.rows || m.c.columns != m.b.columns)
      return GemmMismatch{&st,
                          "stores through a descriptor whose extents are not the operands' "
                          "rows and columns"};
    m.store = *store;
    m.stored = st.operands.back();
    return std::nullopt;
  }

  const KernelValues& v_;
  const ir::Kernel& k_;
};

}  // namespace

std::variant<DescriptorGemm, GemmMismatch> match_descriptor_gemm(const KernelValues& values) {
  return Matcher(values).match();
}

}  // namespace metile::lower
