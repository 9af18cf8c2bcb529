#include "metile/transform/dce.h"

#include <vector>

namespace metile::transform {

namespace {

using ir::Block;
using ir::Op;

// Writes memory, ends a region, or holds such an op in a region (other than its yields).
bool has_effects(const Op& op) {
  const ir::OpInfo& info = ir::op_info(op.kind);
  if (info.has(ir::Trait::WritesMemory) || info.has(ir::Trait::Terminator)) return true;
  for (const Block& r : op.regions)
    for (const Op& inner : r.ops)
      if (!ir::op_info(inner.kind).has(ir::Trait::Terminator) && has_effects(inner)) return true;
  return false;
}

class DeadCode {
 public:
  explicit DeadCode(ir::Kernel& k) : k_(k), uses_(k.types.size(), 0) {
    ir::walk(k_.body, [&](const Op& op) { count(op, +1); });
  }

  bool sweep(Block& b) {
    bool changed = false;
    std::vector<Op> kept;
    for (auto it = b.ops.rbegin(); it != b.ops.rend(); ++it) {
      Op& op = *it;
      if (is_dead(op)) {
        uncount(op);
        changed = true;
        continue;
      }
      for (Block& r : op.regions) changed = sweep(r) || changed;
      kept.push_back(std::move(op));
    }
    b.ops.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
    return changed;
  }

 private:
  void count(const Op& op, int delta) {
    for (ir::ValueId v : op.operands)
      if (v >= 0 && static_cast<size_t>(v) < uses_.size()) uses_[v] += delta;
  }
  // Forgets the uses of a removed op and of everything nested in it.
  void uncount(const Op& op) {
    count(op, -1);
    for (const Block& r : op.regions) ir::walk(r, [&](const Op& inner) { count(inner, -1); });
  }

  bool is_dead(const Op& op) const {
    if (has_effects(op)) return false;
    for (ir::ValueId v : op.results)
      if (uses_[v] > 0) return false;
    return true;
  }

  ir::Kernel& k_;
  std::vector<int> uses_;
};

}  // namespace

ir::PassResult eliminate_dead_code(ir::Kernel k) {
  DeadCode dce(k);
  bool changed = false;
  while (dce.sweep(k.body)) changed = true;
  return {std::move(k), changed};
}

}  // namespace metile::transform
