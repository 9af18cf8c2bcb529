#include "metile/lower/mask_bounds.h"

#include <algorithm>

namespace metile::lower {

namespace {

std::string flipped(const std::string& pred) {
  if (pred == "lt") return "gt";
  if (pred == "le") return "ge";
  if (pred == "gt") return "lt";
  return "le";
}

void collect(const IndexAnalysis& index, ir::ValueId v, std::vector<ir::ValueId>& out) {
  const ir::Op* def = index.definer(v);
  if (def && def->kind == ir::OpKind::And) {
    for (ir::ValueId operand : def->operands) collect(index, operand, out);
    return;
  }
  if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
}

}  // namespace

std::vector<ir::ValueId> conjuncts(const IndexAnalysis& index, ir::ValueId cond) {
  std::vector<ir::ValueId> out;
  collect(index, cond, out);
  return out;
}

std::optional<Bound> bound_of(const ir::Kernel& k, const IndexAnalysis& index, ir::ValueId leaf,
                              int side) {
  const ir::Op* def = index.definer(leaf);
  if (!def || def->kind != ir::OpKind::Cmp) return std::nullopt;
  const std::string& pred = def->str_attr("pred");
  if (pred != "lt" && pred != "le" && pred != "gt" && pred != "ge") return std::nullopt;
  const ir::Type& t = k.type(def->operands[0]);
  if (!t.is_scalar() || !ir::is_integer(t.dtype)) return std::nullopt;
  const ir::ValueId varying = def->operands[side], invariant = def->operands[1 - side];
  return Bound{leaf, varying, invariant, side == 0 ? pred : flipped(pred)};
}

std::optional<int64_t> bound_offset(const IndexAnalysis& index, const Bound& a, const Bound& b) {
  if (a.pred != b.pred || a.invariant != b.invariant) return std::nullopt;
  return index.constant_difference(a.varying, b.varying);
}

bool may_wrap(ir::DType t) { return t != ir::DType::i64; }

}  // namespace metile::lower
