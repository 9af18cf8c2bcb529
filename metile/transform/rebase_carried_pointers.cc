#include "metile/transform/rebase_carried_pointers.h"

#include <map>
#include <optional>

namespace metile::transform {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

const Type kOffset = Type::scalar(ir::DType::i64);

// What defines a value, copied out before the pass moves ops.
struct Definition {
  OpKind kind;
  std::vector<ValueId> operands;
};

class Rebaser {
 public:
  explicit Rebaser(ir::Kernel& k) : k_(k) {
    ir::walk(k_.body, [&](const Op& op) {
      for (ValueId r : op.results) definitions_[r] = {op.kind, op.operands};
    });
  }

  bool block(ir::Block& b) {
    bool changed = false;
    std::vector<Op> ops;
    for (Op& op : b.ops) {
      for (ir::Block& region : op.regions) changed |= block(region);
      if (op.kind != OpKind::For) {
        ops.push_back(std::move(op));
        continue;
      }
      std::vector<Op> after;
      for (size_t j = 0; j + 3 < op.operands.size(); ++j)
        if (const std::optional<ValueId> step = uniform_step(op, j)) {
          rebase(op, j, *step, ops, after);
          changed = true;
        }
      ops.push_back(std::move(op));
      for (Op& o : after) ops.push_back(std::move(o));
    }
    b.ops = std::move(ops);
    return changed;
  }

 private:
  // The scalar s when carried value j is a tile of pointers whose next value is
  // ptr_add(itself, splat(s)).
  std::optional<ValueId> uniform_step(const Op& loop, size_t j) const {
    const ir::Block& body = loop.regions[0];
    const ValueId carried = body.args[1 + j];
    const Type& t = k_.type(carried);
    if (!t.is_tile() || !t.pointer || body.ops.empty()) return std::nullopt;
    const Definition* advance = definition(body.ops.back().operands[j]);
    if (!advance || advance->kind != OpKind::PtrAdd || advance->operands[0] != carried)
      return std::nullopt;
    const Definition* splat = definition(advance->operands[1]);
    if (!splat || splat->kind != OpKind::Splat) return std::nullopt;
    return splat->operands[0];
  }

  const Definition* definition(ValueId v) const {
    const auto found = definitions_.find(v);
    return found == definitions_.end() ? nullptr : &found->second;
  }

  Op make(OpKind kind, std::vector<ValueId> operands, const Type& type, const Op& at) {
    Op op;
    op.kind = kind;
    op.operands = std::move(operands);
    op.results = {k_.new_value(type)};
    op.loc = at.loc;
    return op;
  }

  // The tile `initial` advanced by the scalar `offset`, as the op defining `result`: where
  // initial is ptr_add(splat(p), offsets), ptr_add(splat(ptr_add(p, offset)), offsets), which
  // keeps one uniform base pointer for every element; else ptr_add(initial, splat(offset)).
  Op rebased(ValueId initial, ValueId offset, ValueId result, const Op& at, std::vector<Op>& out) {
    const Type& t = k_.type(initial);
    const Definition* def = definition(initial);
    const Definition* base =
        def && def->kind == OpKind::PtrAdd ? definition(def->operands[0]) : nullptr;
    Op add;
    add.kind = OpKind::PtrAdd;
    add.results = {result};
    add.loc = at.loc;
    if (base && base->kind == OpKind::Splat) {
      const ValueId p = base->operands[0];
      out.push_back(make(OpKind::PtrAdd, {p, offset}, k_.type(p), at));
      out.push_back(make(OpKind::Splat, {out.back().results[0]}, k_.type(def->operands[0]), at));
      add.operands = {out.back().results[0], def->operands[1]};
      return add;
    }
    out.push_back(make(OpKind::Splat, {offset}, Type::tile(ir::DType::i64, t.shape), at));
    add.operands = {initial, out.back().results[0]};
    return add;
  }

  void rebase(Op& loop, size_t j, ValueId step, std::vector<Op>& before, std::vector<Op>& after) {
    ir::Block& body = loop.regions[0];
    const ValueId initial = loop.operands[3 + j];
    const ValueId carried = body.args[1 + j];
    // The offset starts at 0 (before the loop) and is carried instead of the tile.
    Op zero = make(OpKind::Constant, {}, kOffset, loop);
    zero.attrs["value"] = int64_t{0};
    loop.operands[3 + j] = zero.results[0];
    before.push_back(std::move(zero));
    const ValueId offset = k_.new_value(kOffset);
    body.args[1 + j] = offset;
    // The body's tile is the initial tile plus the offset, under the carried value's name.
    std::vector<Op> top;
    top.push_back(rebased(initial, offset, carried, loop, top));
    body.ops.insert(body.ops.begin(), std::make_move_iterator(top.begin()),
                    std::make_move_iterator(top.end()));
    // The next offset: offset + (i64) step, yielded in place of the advanced tile.
    Op& yield = body.ops.back();
    std::vector<Op> tail;
    ValueId wide = step;
    if (k_.type(step) != kOffset) {
      tail.push_back(make(OpKind::Cast, {step}, kOffset, yield));
      wide = tail.back().results[0];
    }
    tail.push_back(make(OpKind::Add, {offset, wide}, kOffset, yield));
    yield.operands[j] = tail.back().results[0];
    body.ops.insert(body.ops.end() - 1, std::make_move_iterator(tail.begin()),
                    std::make_move_iterator(tail.end()));
    // After the loop, its result is the initial tile plus the final offset.
    const ValueId result = loop.results[j];
    loop.results[j] = k_.new_value(kOffset);
    after.push_back(rebased(initial, loop.results[j], result, loop, after));
  }

  ir::Kernel& k_;
  std::map<ValueId, Definition> definitions_;
};

}  // namespace

ir::PassResult rebase_carried_pointers(ir::Kernel k) {
  const bool changed = Rebaser(k).block(k.body);
  return {std::move(k), changed};
}

}  // namespace metile::transform
