#include "metile/transform/derive_induction_values.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

class Deriver {
 public:
  explicit Deriver(ir::Kernel& k) : k_(k) { index(); }

  bool block(ir::Block& b) {
    bool changed = false;
    for (Op& op : b.ops) {
      for (ir::Block& region : op.regions) changed |= block(region);
      if (op.kind != OpKind::For) continue;
      for (size_t j = op.results.size(); j-- > 0;)
        if (const std::optional<ValueId> delta = invariant_step(op, j)) {
          derive(op, j, *delta);
          index();  // the body's ops moved
          changed = true;
        }
    }
    return changed;
  }

 private:
  void index() {
    definers_.clear();
    used_.clear();
    ir::walk(k_.body, [&](const Op& op) {
      for (ValueId r : op.results) definers_[r] = &op;
      for (ValueId v : op.operands) used_.insert(v);
    });
  }

  // The loop-invariant d when carried value j is an integer scalar yielded as itself + d and
  // the loop's result j is unused.
  std::optional<ValueId> invariant_step(const Op& loop, size_t j) const {
    const ir::Block& body = loop.regions[0];
    const ValueId carried = body.args[1 + j];
    const Type& t = k_.type(carried);
    if (!t.is_scalar() || (t.dtype != ir::DType::i32 && t.dtype != ir::DType::i64) ||
        used_.count(loop.results[j]) || body.ops.empty())
      return std::nullopt;
    const Op* next = definer(body.ops.back().operands[j]);
    if (!next || next->kind != OpKind::Add) return std::nullopt;
    for (int side = 0; side < 2; ++side) {
      const ValueId d = next->operands[static_cast<size_t>(1 - side)];
      if (next->operands[static_cast<size_t>(side)] == carried && invariant(d, body)) return d;
    }
    return std::nullopt;
  }

  // Whether v has one value in every iteration of the loop whose body is `body`: it is
  // defined before the loop, or by a pure op of the body's top level whose operands are.
  bool invariant(ValueId v, const ir::Block& body) const {
    if (defined_outside(v, body)) return true;
    for (const Op& op : body.ops) {
      if (op.results.size() != 1 || op.results[0] != v) continue;
      if (!op.regions.empty() || !ir::op_info(op.kind).has(ir::Trait::Pure)) return false;
      for (ValueId o : op.operands)
        if (!invariant(o, body)) return false;
      return true;
    }
    return false;
  }

  // The body's ops that compute invariant v, taken out of it in dependence order.
  void take_invariant(ValueId v, ir::Block& body, std::vector<Op>& taken) const {
    const auto it = std::find_if(body.ops.begin(), body.ops.end(), [&](const Op& op) {
      return op.results.size() == 1 && op.results[0] == v;
    });
    if (it == body.ops.end()) return;
    Op op = std::move(*it);
    body.ops.erase(it);
    for (ValueId o : op.operands) take_invariant(o, body, taken);
    taken.push_back(std::move(op));
  }

  // Whether v is defined before the loop whose body is `body` (not by it or inside it).
  bool defined_outside(ValueId v, const ir::Block& body) const {
    bool inside = false;
    for (ValueId a : body.args) inside |= a == v;
    ir::walk(body, [&](const Op& op) {
      for (ValueId r : op.results) inside |= r == v;
      for (const ir::Block& region : op.regions)
        for (ValueId a : region.args) inside |= a == v;
    });
    return !inside;
  }

  const Op* definer(ValueId v) const {
    const auto it = definers_.find(v);
    return it == definers_.end() ? nullptr : it->second;
  }

  std::optional<int64_t> constant(ValueId v) const {
    const Op* def = definer(v);
    if (!def || def->kind != OpKind::Constant || !ir::is_integer(k_.type(v).dtype))
      return std::nullopt;
    return std::get<int64_t>(def->attrs.at("value"));
  }

  ValueId emit(std::vector<Op>& ops, OpKind kind, std::vector<ValueId> operands, const Type& type,
               const Op& at, ValueId result = ir::kNoValue) {
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.results = {result == ir::kNoValue ? k_.new_value(type) : result};
    op.loc = at.loc;
    ops.push_back(std::move(op));
    return ops.back().results[0];
  }

  void derive(Op& loop, size_t j, ValueId delta) {
    ir::Block& body = loop.regions[0];
    const ValueId carried = body.args[1 + j], initial = loop.operands[3 + j];
    const Type type = k_.type(carried);
    const ValueId i = body.args[0], start = loop.operands[0], step = loop.operands[2];
    const Type index = k_.type(i);
    // The iteration number n = (i - s) / t, exact: i is s plus a whole number of steps.
    std::vector<Op> top;
    take_invariant(delta, body, top);  // to the top, where the derived value needs it
    ValueId n = i;
    if (constant(start) != 0) n = emit(top, OpKind::Sub, {n, start}, index, loop);
    if (constant(step) != 1) n = emit(top, OpKind::FloorDiv, {n, step}, index, loop);
    if (index != type) n = emit(top, OpKind::Cast, {n}, type, loop);
    ValueId d = delta;
    if (k_.type(delta) != type) d = emit(top, OpKind::Cast, {delta}, type, loop);
    const ValueId advanced = emit(top, OpKind::Mul, {n, d}, type, loop);
    emit(top, OpKind::Add, {initial, advanced}, type, loop, carried);
    body.ops.insert(body.ops.begin(), std::make_move_iterator(top.begin()),
                    std::make_move_iterator(top.end()));
    // The carry goes: its initial value, block argument, yielded value and result.
    loop.operands.erase(loop.operands.begin() + static_cast<std::ptrdiff_t>(3 + j));
    body.args.erase(body.args.begin() + static_cast<std::ptrdiff_t>(1 + j));
    Op& yield = body.ops.back();
    const ValueId next = yield.operands[j];
    yield.operands.erase(yield.operands.begin() + static_cast<std::ptrdiff_t>(j));
    loop.results.erase(loop.results.begin() + static_cast<std::ptrdiff_t>(j));
    // The advance, read by nothing else now, goes with it.
    int uses = 0;
    ir::walk(body, [&](const Op& op) {
      for (ValueId v : op.operands) uses += v == next;
    });
    if (uses == 0)
      std::erase_if(body.ops,
                    [&](const Op& op) { return op.results.size() == 1 && op.results[0] == next; });
  }

  ir::Kernel& k_;
  std::map<ValueId, const Op*> definers_;
  std::set<ValueId> used_;
};

}  // namespace

ir::PassResult derive_induction_values(ir::Kernel k) {
  const bool changed = Deriver(k).block(k.body);
  return {std::move(k), changed};
}

}  // namespace metile::transform
