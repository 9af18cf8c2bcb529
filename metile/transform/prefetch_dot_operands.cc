#include "metile/transform/prefetch_dot_operands.h"

#include <map>
#include <optional>
#include <set>

#include "metile/ir/printer.h"

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

// Which iteration's values a clone computes: the first one's (before the loop), the next
// one's (inside the body), or the current one's (what the next one's carried values are).
enum class Iteration { First, Next, Current };

class Prefetcher {
 public:
  Prefetcher(ir::Kernel& k, int64_t threads, int64_t register_budget, bool keep_accumulators)
      : k_(k),
        names_(ir::printed_value_names(k)),
        threads_(threads),
        budget_(register_budget),
        keep_accumulators_(keep_accumulators) {
    ir::walk(k_.body, [&](const Op& op) {
      if (op.kind == OpKind::Constant && op.has_attr("value") &&
          ir::is_integer(k_.type(op.results[0]).dtype))
        constants_[op.results[0]] = op.int_attr("value");
    });
  }

  bool block(ir::Block& b) {
    bool changed = false;
    std::vector<Op> ops;
    for (Op& op : b.ops) {
      for (ir::Block& region : op.regions) changed |= block(region);
      if (op.kind == OpKind::For) changed |= loop(op, ops);
      ops.push_back(std::move(op));
    }
    b.ops = std::move(ops);
    return changed;
  }

 private:
  // Prefetches the qualifying loads of `loop`, whose prologue goes to `before`.
  bool loop(Op& loop, std::vector<Op>& before) {
    const std::optional<int64_t> step = constant(loop.operands[2]);
    if (!step || *step <= 0 || registers(loop.regions[0]) > budget_) return false;
    if (keep_accumulators_ && accumulates_only(loop)) return false;
    int loads = 0;
    for (size_t position = 0; position < loop.regions[0].ops.size(); ++position) {
      const Op& op = loop.regions[0].ops[position];
      if (op.kind == OpKind::Load && (op.operands.size() == 1 || op.operands.size() == 3) &&
          k_.type(op.results[0]).is_tile() && feeds_dot(loop.regions[0], op.results[0]))
        loads += prefetch(loop, position, before);
    }
    if (loads > 0) {
      const ValueId index = loop.regions[0].args[0];
      const std::string name =
          static_cast<size_t>(index) < names_.size() ? names_[static_cast<size_t>(index)] : "";
      loops.push_back("for " + name + (loop.loc.known() ? " at " + loop.loc.str() : "") + " (" +
                      std::to_string(loads) + (loads == 1 ? " load)" : " loads)"));
    }
    return loads > 0;
  }

 public:
  std::vector<std::string> loops;

 private:
  // 32-bit registers a thread holds for the loop's dots: the f32 accumulators, and the operand
  // tiles its loads would fetch ahead twice over (the tile in use and the one in flight).
  int64_t registers(const ir::Block& body) const {
    int64_t words = 0;
    for (const Op& op : body.ops) {
      if (op.results.size() != 1) continue;
      const Type& t = k_.type(op.results[0]);
      if (op.kind == OpKind::Dot && t.is_tile()) words += t.num_elements();
      if (op.kind == OpKind::Load && t.is_tile() && feeds_dot(body, op.results[0]))
        words += 2 * ((t.num_elements() * ir::dtype_bytes(t.dtype) + 3) / 4);
    }
    return (words + threads_ - 1) / threads_;
  }

  bool feeds_dot(const ir::Block& body, ValueId v) const {
    for (const Op& op : body.ops)
      if (op.kind == OpKind::Dot && k_.type(op.operands[0]).is_tile() &&
          (op.operands[0] == v || op.operands[1] == v))
        return true;
    return false;
  }

  std::optional<int64_t> constant(ValueId v) const {
    const auto found = constants_.find(v);
    return found == constants_.end() ? std::nullopt : std::optional<int64_t>(found->second);
  }

  // Replaces the load at `position` of the loop's body by the next iteration's load into a
  // new carried value; false (nothing changed) when its operands cannot be cloned.
  bool prefetch(Op& loop, size_t position, std::vector<Op>& before) {
    ir::Block& body = loop.regions[0];
    const Op load = body.ops[position];
    Cloner start(*this, loop, body, position, Iteration::First);
    Cloner next(*this, loop, body, position, Iteration::Next);
    std::vector<ValueId> first, following;
    for (ValueId v : load.operands) {
      const std::optional<ValueId> s = start.value(v), n = next.value(v);
      if (!s || !n) return false;
      first.push_back(*s);
      following.push_back(*n);
    }
    const ValueId iv_next = next.induction();
    Op first_load = guarded(load, first, loop.operands[0], loop.operands[1], start.ops);
    Op next_load = guarded(load, following, iv_next, loop.operands[1], next.ops);
    // Before the loop: the first iteration's clones and load; its value starts the carry.
    for (Op& op : start.ops) before.push_back(std::move(op));
    const ValueId initial = first_load.results[0];
    before.push_back(std::move(first_load));
    // In the body: the current tile is a carried value, the next one is loaded in its place.
    const ValueId current = k_.new_value(k_.type(load.results[0]));
    replace_uses(body, load.results[0], current);
    std::vector<Op> inserted = std::move(next.ops);
    const ValueId following_value = next_load.results[0];
    inserted.push_back(std::move(next_load));
    body.ops.erase(body.ops.begin() + static_cast<std::ptrdiff_t>(position));
    body.ops.insert(body.ops.begin() + static_cast<std::ptrdiff_t>(position),
                    std::make_move_iterator(inserted.begin()),
                    std::make_move_iterator(inserted.end()));
    loop.operands.push_back(initial);
    body.args.push_back(current);
    body.ops.back().operands.push_back(following_value);
    loop.results.push_back(k_.new_value(k_.type(current)));
    return true;
  }

  // `load` with `operands`, its mask also requiring index < end (a tile of the load's shape).
  Op guarded(const Op& load, std::vector<ValueId> operands, ValueId index, ValueId end,
             std::vector<Op>& out) {
    const Type& t = k_.type(load.results[0]);
    const Type flag = Type::scalar(ir::DType::i1);
    const ValueId in_range = emit(out, OpKind::Cmp, {index, end}, flag, load);
    out.back().attrs["pred"] = std::string("lt");
    const ValueId guard =
        emit(out, OpKind::Splat, {in_range}, Type::tile(ir::DType::i1, t.shape), load);
    if (operands.size() == 1) {
      Op zero;
      zero.kind = OpKind::Constant;
      zero.results = {k_.new_value(Type::scalar(t.dtype))};
      zero.attrs["value"] = ir::is_float(t.dtype) ? ir::Attr{0.0} : ir::Attr{int64_t{0}};
      zero.loc = load.loc;
      out.push_back(zero);
      operands.push_back(guard);
      operands.push_back(emit(out, OpKind::Splat, {zero.results[0]}, t, load));
    } else {
      operands[1] = emit(out, OpKind::And, {operands[1], guard}, k_.type(load.operands[1]), load);
    }
    Op copy = load;
    copy.operands = std::move(operands);
    copy.results = {k_.new_value(t)};
    return copy;
  }

  ValueId emit(std::vector<Op>& out, OpKind kind, std::vector<ValueId> operands, const Type& type,
               const Op& at) {
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.results = {k_.new_value(type)};
    op.loc = at.loc;
    out.push_back(std::move(op));
    return out.back().results[0];
  }

  static void replace_uses(ir::Block& b, ValueId from, ValueId to) {
    for (Op& op : b.ops) {
      for (ValueId& v : op.operands)
        if (v == from) v = to;
      for (ir::Block& region : op.regions) replace_uses(region, from, to);
    }
  }

  // Clones the pure ops a value of the body depends on, for the iteration `at` names.
  class Cloner {
   public:
    Cloner(Prefetcher& p, const Op& loop, const ir::Block& body, size_t position, Iteration at)
        : p_(p), loop_(loop), body_(body), position_(position), at_(at) {
      for (size_t i = 0; i < body.ops.size(); ++i)
        for (ValueId r : body.ops[i].results) defined_at_[r] = i;
    }

    // The value v takes in the iteration (nullopt when an impure op or a region is in the way).
    std::optional<ValueId> value(ValueId v) { return clone(v, at_); }

    // i + step, computed once (Next only).
    ValueId induction() {
      if (iv_next_ == ir::kNoValue)
        iv_next_ = p_.emit(ops, OpKind::Add, {body_.args[0], loop_.operands[2]},
                           p_.k_.type(body_.args[0]), loop_);
      return iv_next_;
    }

    std::vector<Op> ops;

   private:
    std::optional<ValueId> clone(ValueId v, Iteration mode) {
      const auto key = std::make_pair(v, mode);
      if (const auto found = memo_.find(key); found != memo_.end()) return found->second;
      std::optional<ValueId> result = compute(v, mode);
      memo_[key] = result;
      return result;
    }

    std::optional<ValueId> compute(ValueId v, Iteration mode) {
      const std::vector<ValueId>& args = body_.args;
      if (v == args[0])
        return mode == Iteration::First  ? loop_.operands[0]
               : mode == Iteration::Next ? induction()
                                         : v;
      for (size_t j = 1; j < args.size(); ++j)
        if (v == args[j]) {
          if (mode == Iteration::First) return loop_.operands[2 + j];
          if (mode == Iteration::Next)
            return clone(body_.ops.back().operands[j - 1], Iteration::Current);
          return v;
        }
      const auto found = defined_at_.find(v);
      if (found == defined_at_.end()) return v;  // defined before the loop
      // The current iteration's value, computed before the prefetch: as it is.
      if (mode == Iteration::Current && found->second < position_) return v;
      const Op& op = body_.ops[found->second];
      if (!op.regions.empty() || !ir::op_info(op.kind).has(ir::Trait::Pure) ||
          op.results.size() != 1)
        return std::nullopt;
      Op copy = op;
      for (ValueId& operand : copy.operands) {
        const std::optional<ValueId> cloned = clone(operand, mode);
        if (!cloned) return std::nullopt;
        operand = *cloned;
      }
      copy.results = {p_.k_.new_value(p_.k_.type(v))};
      ops.push_back(std::move(copy));
      return ops.back().results[0];
    }

    Prefetcher& p_;
    const Op& loop_;
    const ir::Block& body_;
    const size_t position_;
    const Iteration at_;
    std::map<ValueId, size_t> defined_at_;
    std::map<std::pair<ValueId, Iteration>, std::optional<ValueId>> memo_;
    ValueId iv_next_ = ir::kNoValue;
  };

  // Whether the loop carries one value, yielded as dot(a, b, itself).
  bool accumulates_only(const Op& loop) const {
    const ir::Block& body = loop.regions[0];
    if (loop.results.size() != 1 || body.ops.empty()) return false;
    const ValueId next = body.ops.back().operands[0];
    for (const Op& op : body.ops)
      if (op.kind == OpKind::Dot && op.results[0] == next) return op.operands[2] == body.args[1];
    return false;
  }

  ir::Kernel& k_;
  const std::vector<std::string> names_;
  const int64_t threads_, budget_;
  const bool keep_accumulators_;
  std::map<ValueId, int64_t> constants_;
};

}  // namespace

Prefetching prefetch_dot_operands(ir::Kernel k, int64_t threads, int64_t register_budget,
                                  bool keep_accumulators) {
  Prefetcher prefetcher(k, threads, register_budget, keep_accumulators);
  const bool changed = prefetcher.block(k.body);
  return {{std::move(k), changed}, std::move(prefetcher.loops)};
}

}  // namespace metile::transform
