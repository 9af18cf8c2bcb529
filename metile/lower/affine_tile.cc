#include "metile/lower/affine_tile.h"

namespace metile::lower {

using ir::OpKind;
using ir::ValueId;

bool all_zero(const Coefficients& c) {
  for (const std::optional<int64_t>& x : c)
    if (x != 0) return false;
  return true;
}

bool all_known(const Coefficients& c) {
  for (const std::optional<int64_t>& x : c)
    if (!x) return false;
  return true;
}

std::optional<int64_t> Affine::constant(ValueId v) const {
  const ir::Op* op = definer(v);
  if (!op) return std::nullopt;
  if (op->kind == OpKind::Splat) return constant(op->operands[0]);
  if (op->kind != OpKind::Constant) return std::nullopt;
  const int64_t* value = std::get_if<int64_t>(&op->attrs.at("value"));
  return value ? std::optional<int64_t>(*value) : std::nullopt;
}

std::optional<Coefficients> Affine::of(ValueId v) const {
  const ir::Type& t = k_.type(v);
  if (!t.is_tile()) return Coefficients{};
  const size_t rank = t.shape.size();
  const ir::Op* op = definer(v);
  if (!op) return std::nullopt;
  if (op->kind == OpKind::Arange && !op->has_attr("layout")) return Coefficients{1};
  if (op->kind == OpKind::Splat) return Coefficients(rank, 0);
  if (op->kind == OpKind::ExpandDims) {
    std::optional<Coefficients> c = of(op->operands[0]);
    if (c) c->insert(c->begin() + op->int_attr("axis"), 0);
    return c;
  }
  if (op->kind == OpKind::Broadcast) {
    std::optional<Coefficients> c = of(op->operands[0]);
    if (!c || c->size() != rank) return std::nullopt;
    const ir::Type& source = k_.type(op->operands[0]);
    for (size_t d = 0; d < rank; ++d)
      if (source.shape[d] == 1) (*c)[d] = 0;
    return c;
  }
  if (op->kind == OpKind::Add || op->kind == OpKind::Sub || op->kind == OpKind::PtrAdd) {
    const std::optional<Coefficients> a = widened(op->operands[0], rank),
                                      b = widened(op->operands[1], rank);
    if (!a || !b) return std::nullopt;
    Coefficients c(rank);
    for (size_t d = 0; d < rank; ++d)
      if ((*a)[d] && (*b)[d])
        c[d] = op->kind == OpKind::Sub ? *(*a)[d] - *(*b)[d] : *(*a)[d] + *(*b)[d];
    return c;
  }
  if (op->kind == OpKind::Mul) {
    const std::optional<Coefficients> a = widened(op->operands[0], rank),
                                      b = widened(op->operands[1], rank);
    if (!a || !b) return std::nullopt;
    if (all_zero(*a)) return scaled(*b, constant(op->operands[0]));
    if (all_zero(*b)) return scaled(*a, constant(op->operands[1]));
    return std::nullopt;
  }
  return std::nullopt;  // only the ops above keep a value affine
}

bool Affine::conjuncts(ValueId mask, std::vector<ValueId>& atoms) const {
  const ir::Op* op = definer(mask);
  if (op && op->kind == OpKind::And && k_.type(mask).is_tile())
    return conjuncts(op->operands[0], atoms) && conjuncts(op->operands[1], atoms);
  atoms.push_back(mask);
  return difference(mask).has_value();
}

const ir::Op* Affine::comparison(ValueId atom) const {
  const ir::Op* op = definer(atom);
  if (op && (op->kind == OpKind::Broadcast || op->kind == OpKind::ExpandDims))
    return comparison(op->operands[0]);
  return op && op->kind == OpKind::Cmp ? op : nullptr;
}

std::optional<Coefficients> Affine::difference(ValueId atom) const {
  const ir::Type& t = k_.type(atom);
  const size_t rank = t.is_tile() ? t.shape.size() : 0;
  const ir::Op* op = definer(atom);
  if (op && op->kind == OpKind::Cmp) {
    const std::optional<Coefficients> x = widened(op->operands[0], rank),
                                      y = widened(op->operands[1], rank);
    if (!x || !y || !all_known(*x) || !all_known(*y)) return std::nullopt;
    Coefficients c(rank);
    for (size_t d = 0; d < rank; ++d) c[d] = *(*x)[d] - *(*y)[d];
    return c;
  }
  if (op && op->kind == OpKind::Broadcast) {
    std::optional<Coefficients> c = difference(op->operands[0]);
    const ir::Type& source = k_.type(op->operands[0]);
    if (!c || c->size() != rank) return std::nullopt;
    for (size_t d = 0; d < rank; ++d)
      if (source.shape[d] == 1) (*c)[d] = 0;
    return c;
  }
  if (op && op->kind == OpKind::ExpandDims) {
    std::optional<Coefficients> c = difference(op->operands[0]);
    if (c) c->insert(c->begin() + op->int_attr("axis"), 0);
    return c;
  }
  const std::optional<Coefficients> c = of(atom);
  return c && all_zero(*c) ? std::optional<Coefficients>(Coefficients(rank, 0)) : std::nullopt;
}

std::optional<Coefficients> Affine::widened(ValueId v, size_t rank) const {
  std::optional<Coefficients> c = of(v);
  if (c && c->empty()) return Coefficients(rank, 0);  // a uniform scalar
  if (c && c->size() != rank) return std::nullopt;
  return c;
}

Coefficients Affine::scaled(Coefficients c, std::optional<int64_t> factor) {
  for (std::optional<int64_t>& x : c)
    if (x != 0) x = factor && x ? std::optional<int64_t>(*x * *factor) : std::nullopt;
  return c;
}

std::optional<int> Affine::unit_stride_axis(ValueId p) const {
  const std::optional<Coefficients> c = of(p);
  if (!c) return std::nullopt;
  for (int d = static_cast<int>(c->size()) - 1; d >= 0; --d)
    if ((*c)[static_cast<size_t>(d)] == 1) return d;
  return std::nullopt;
}

}  // namespace metile::lower
