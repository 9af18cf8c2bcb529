#include "metile/transform/canonicalize.h"

#include <cmath>
#include <map>
#include <optional>

#include "metile/ir/scalar_eval.h"
#include "metile/support/errors.h"
#include "metile/transform/constant_folding.h"
#include "metile/transform/integer_intervals.h"

namespace metile::transform {

namespace {

using ir::Attr;
using ir::DType;
using ir::Op;
using ir::OpKind;
using ir::ValueId;

class Canonicalizer {
 public:
  explicit Canonicalizer(ir::Kernel& k) : k_(k) {}

  void run() { k_.body.ops = block(std::move(k_.body.ops)); }
  bool changed() const { return changed_; }

 private:
  ValueId resolve(ValueId v) const {
    for (auto it = replaced_.find(v); it != replaced_.end(); it = replaced_.find(v)) v = it->second;
    return v;
  }

  // The constant a scalar holds, or every element of a splat tile holds.
  const Attr* constant_of(ValueId v) const {
    if (auto s = splat_of_.find(v); s != splat_of_.end()) v = s->second;
    auto c = constants_.find(v);
    return c == constants_.end() ? nullptr : &c->second;
  }

  std::optional<double> number_of(ValueId v) const {
    const Attr* a = constant_of(v);
    if (!a) return std::nullopt;
    if (auto* i = std::get_if<int64_t>(a)) return static_cast<double>(*i);
    return std::get<double>(*a);
  }

  bool is_int(ValueId v, int64_t value) const {
    const Attr* a = constant_of(v);
    return a && !ir::is_float(k_.type(v).dtype) && std::holds_alternative<int64_t>(*a) &&
           std::get<int64_t>(*a) == value;
  }
  bool is_float(ValueId v, double value, bool negative_zero = false) const {
    auto n = number_of(v);
    return n && ir::is_float(k_.type(v).dtype) && *n == value && std::signbit(*n) == negative_zero;
  }
  bool is_one(ValueId v) const { return is_int(v, 1) || is_float(v, 1.0); }

  std::vector<Op> block(std::vector<Op> ops) {
    std::vector<Op> out;
    for (Op& op : ops) {
      for (ValueId& v : op.operands) v = resolve(v);
      rewrite(op, out);
    }
    return out;
  }

  void rewrite(Op& op, std::vector<Op>& out) {
    if ((op.kind == OpKind::If && inline_constant_if(op, out)) ||
        (op.kind == OpKind::For && drop_empty_loop(op))) {
      changed_ = true;
      return;
    }
    for (ir::Block& r : op.regions) r.ops = block(std::move(r.ops));
    if (const std::optional<bool> mask = constant_mask(op)) {
      changed_ = true;
      const bool load = op.kind == OpKind::Load;
      if (!*mask) {  // no access: a load is its fill
        if (load) replaced_[op.results[0]] = op.operands[2];
        return;
      }
      op.operands.resize(load ? 1 : 2);  // every access: no mask (and no fill)
    }
    if (auto v = identity(op)) {
      replaced_[op.results[0]] = *v;
      changed_ = true;
      return;
    }
    // Every fold turns the op into a constant or a splat, which are never folded themselves.
    const OpKind before_fold = op.kind;
    fold(op, out);
    changed_ = changed_ || op.kind != before_fold;
    if (op.kind == OpKind::Constant) constants_[op.results[0]] = op.attrs.at("value");
    if (op.kind == OpKind::Splat) splat_of_[op.results[0]] = op.operands[0];
    intervals_.record(k_, op);
    out.push_back(std::move(op));
  }

  // if with a constant condition: the chosen region's ops join the enclosing block.
  bool inline_constant_if(Op& op, std::vector<Op>& out) {
    auto cond = number_of(op.operands[0]);
    if (!cond) return false;
    const size_t chosen = *cond != 0 ? 0 : 1;
    if (chosen >= op.regions.size()) return true;  // no else-region, no results
    std::vector<Op> ops = block(std::move(op.regions[chosen].ops));
    if (!ops.empty() && ops.back().kind == OpKind::Yield) {
      for (size_t i = 0; i < op.results.size(); ++i)
        replaced_[op.results[i]] = ops.back().operands[i];
      ops.pop_back();
    }
    for (Op& inner : ops) out.push_back(std::move(inner));
    return true;
  }

  // The value of a load's or store's mask when it is the same constant everywhere (a false
  // load's fill must have its result type, to stand for it).
  std::optional<bool> constant_mask(const Op& op) const {
    const bool load = op.kind == OpKind::Load;
    if ((!load && op.kind != OpKind::Store) || op.operands.size() != 3) return std::nullopt;
    const ValueId mask = op.operands[load ? 1 : 2];
    if (is_int(mask, 1)) return true;
    if (is_int(mask, 0) && (!load || k_.type(op.operands[2]) == k_.type(op.results[0])))
      return false;
    return std::nullopt;
  }

  // A loop with constant bounds that never runs yields its initial values.
  bool drop_empty_loop(const Op& op) {
    auto start = number_of(op.operands[0]), end = number_of(op.operands[1]),
         step = number_of(op.operands[2]);
    if (!start || !end || !step || *step <= 0 || *start < *end) return false;
    for (size_t i = 0; i < op.results.size(); ++i) replaced_[op.results[i]] = op.operands[3 + i];
    return true;
  }

  // The existing value an op computes, if an exact identity gives one.
  std::optional<ValueId> identity(const Op& op) const {
    const auto& x = op.operands;
    if (op.kind == OpKind::Broadcast) return same_type_operand(op);
    if (op.kind == OpKind::PtrAdd) return is_int(x[1], 0) ? std::optional(x[0]) : std::nullopt;
    const std::optional<ir::ScalarOp> scalar = ir::scalar_op(op.kind);
    if (!scalar) return std::nullopt;
    using S = ir::ScalarOp;
    switch (*scalar) {
      case S::Add:
        if (is_int(x[1], 0) || is_float(x[1], 0.0, true)) return x[0];
        if (is_int(x[0], 0) || is_float(x[0], 0.0, true)) return x[1];
        return std::nullopt;
      case S::Sub:
        if (is_int(x[1], 0) || is_float(x[1], 0.0)) return x[0];
        return std::nullopt;
      case S::Mul:
        if (is_one(x[1])) return x[0];
        if (is_one(x[0])) return x[1];
        if (is_int(x[0], 0)) return x[0];
        if (is_int(x[1], 0)) return x[1];
        return std::nullopt;
      case S::Div:
        if (is_one(x[1])) return x[0];
        return std::nullopt;
      case S::FloorDiv:  // for floats x // 1 is floor(x)
        if (is_int(x[1], 1)) return x[0];
        return std::nullopt;
      case S::And:
        if (x[0] == x[1]) return x[0];
        if (is_int(x[0], 0)) return x[0];
        if (is_int(x[1], 0)) return x[1];
        if (k_.type(x[0]).dtype == DType::i1 && is_int(x[1], 1)) return x[0];
        if (k_.type(x[0]).dtype == DType::i1 && is_int(x[0], 1)) return x[1];
        return std::nullopt;
      case S::Or:
        if (x[0] == x[1]) return x[0];
        if (is_int(x[1], 0)) return x[0];
        if (is_int(x[0], 0)) return x[1];
        if (k_.type(x[0]).dtype == DType::i1 && is_int(x[1], 1)) return x[1];
        if (k_.type(x[0]).dtype == DType::i1 && is_int(x[0], 1)) return x[0];
        return std::nullopt;
      case S::Xor:
        if (is_int(x[1], 0)) return x[0];
        if (is_int(x[0], 0)) return x[1];
        return std::nullopt;
      case S::Shl:
      case S::Shr:
        if (is_int(x[1], 0)) return x[0];
        return std::nullopt;
      case S::Min:
      case S::Max:
        if (x[0] == x[1]) return x[0];
        return std::nullopt;
      case S::Select: {
        if (x[1] == x[2]) return x[1];
        auto cond = number_of(x[0]);
        if (!cond) return std::nullopt;
        return *cond != 0 ? x[1] : x[2];
      }
      case S::Cast:
        return same_type_operand(op);
      case S::Constant:
      case S::Rem:
      case S::Cmp:
      case S::Neg:
      case S::Abs:
      case S::Exp:
      case S::Exp2:
      case S::Log:
      case S::Sqrt:
      case S::Rsqrt:
      case S::Tanh:
      case S::Sin:
      case S::Cos:
      case S::Floor:
      case S::Ceil:
        return std::nullopt;
    }
    return std::nullopt;
  }

  // The operand of a conversion (cast, broadcast) that already has the result type.
  std::optional<ValueId> same_type_operand(const Op& op) const {
    if (k_.type(op.operands[0]) == k_.type(op.results[0])) return op.operands[0];
    return std::nullopt;
  }

  // An integer division by the constant 0 is undefined on every target: an error now,
  // rather than a fault or garbage at run time.
  void reject_zero_divisor(const Op& op) const {
    if (op.kind != OpKind::Div && op.kind != OpKind::Rem && op.kind != OpKind::FloorDiv) return;
    if (!ir::is_float(k_.type(op.operands[1]).dtype) && is_int(op.operands[1], 0))
      throw UserError(std::string(ir::op_name(op.kind)) +
                          ": integer division by zero (the divisor is the constant 0)",
                      op.loc);
  }

  // Rewrites op in place into a constant, or a splat of a new constant or of a splat's scalar.
  void fold(Op& op, std::vector<Op>& out) {
    if ((op.kind == OpKind::Broadcast || op.kind == OpKind::ExpandDims) &&
        splat_of_.count(op.operands[0])) {
      op.operands = {splat_of_.at(op.operands[0])};
      op.attrs.clear();
      op.kind = OpKind::Splat;
      return;
    }
    // The evaluator decides what folds: only exact values (no math functions, whose target
    // results may differ from the host's).
    if (op.operands.empty() || !ir::scalar_op(op.kind) || op.results.size() != 1) return;
    const ir::Type result = k_.type(op.results[0]);
    if (result.is_vector()) return;
    reject_zero_divisor(op);
    // A comparison its operands' intervals decide, whatever their values (an arange against a
    // bound it never reaches).
    if (op.kind == OpKind::Cmp) {
      if (auto decided = intervals_.decide(op.str_attr("pred"), op.operands[0], op.operands[1]))
        return become_constant(op, int64_t{*decided ? 1 : 0}, out);
    }
    std::vector<Attr> values;
    for (ValueId v : op.operands) {
      const Attr* a = constant_of(v);
      if (!a) return;
      values.push_back(*a);
    }
    auto folded = fold_constant(op, values, k_.type(op.operands[0]).dtype, result.dtype);
    if (folded) become_constant(op, *folded, out);
  }

  // Rewrites op into the constant `value`: for a tile, a splat of a new scalar constant.
  void become_constant(Op& op, const Attr& value, std::vector<Op>& out) {
    const ir::Type result = k_.type(op.results[0]);
    op.operands.clear();
    op.attrs = {{"value", value}};
    op.kind = OpKind::Constant;
    if (!result.is_tile()) return;
    Op scalar = op;
    scalar.results = {k_.new_value(ir::Type::scalar(result.dtype))};
    constants_[scalar.results[0]] = value;
    intervals_.record(k_, scalar);
    op.kind = OpKind::Splat;
    op.attrs.clear();
    op.operands = {scalar.results[0]};
    out.push_back(std::move(scalar));
  }

  ir::Kernel& k_;
  std::map<ValueId, ValueId> replaced_;  // result of a removed op -> the value it equals
  std::map<ValueId, Attr> constants_;    // scalar constants
  std::map<ValueId, ValueId> splat_of_;  // splat tile -> its scalar
  IntegerIntervals intervals_;           // of the integer values rewritten so far
  bool changed_ = false;
};

}  // namespace

ir::PassResult canonicalize(ir::Kernel k) {
  Canonicalizer canonicalizer(k);
  canonicalizer.run();
  const bool changed = canonicalizer.changed();
  return {std::move(k), changed};
}

}  // namespace metile::transform
