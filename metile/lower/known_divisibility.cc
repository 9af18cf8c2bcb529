#include "metile/lower/known_divisibility.h"

#include <algorithm>
#include <optional>

namespace metile::lower {

namespace {

using ir::OpKind;

// The lowest set bit of c (kMax for 0, which every power of two divides).
int64_t low_bit(int64_t c) {
  if (c == 0) return KnownDivisibility::kMax;
  const uint64_t u = static_cast<uint64_t>(c);
  return static_cast<int64_t>(std::min<uint64_t>(u & (~u + 1), KnownDivisibility::kMax));
}

int64_t capped(int64_t a, int64_t b) {
  return a >= KnownDivisibility::kMax / b ? KnownDivisibility::kMax : a * b;
}

}  // namespace

KnownDivisibility::KnownDivisibility(const ir::Kernel& k)
    : k_(k),
      definer_(k.types.size(), nullptr),
      param_(k.types.size(), 0),
      induction_(k.types.size(), nullptr),
      memo_(k.types.size(), 0) {
  for (const ir::Param& p : k.params) param_[p.value] = std::max<int64_t>(1, p.divisibility);
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) definer_[r] = &op;
    if (op.kind == OpKind::For) induction_[op.regions[0].args[0]] = &op;
  });
}

int64_t KnownDivisibility::of(ir::ValueId v) {
  if (!known(v)) return compute(v);  // made after the analysis: nothing is known of it
  if (memo_[v] != 0) return memo_[v];
  memo_[v] = 1;  // a cycle through loop-carried values proves nothing
  const int64_t d = compute(v);
  memo_[v] = d;
  return d;
}

bool KnownDivisibility::no_wrap(ir::ValueId v, int64_t span) {
  const auto [d, r] = residue(v);
  return r + span < d;
}

std::pair<int64_t, int64_t> KnownDivisibility::residue(ir::ValueId v) {
  const ir::Op* def = definer(v);
  if (def && def->kind == OpKind::Add && ir::is_integer(k_.type(v).dtype)) {
    const auto [da, ra] = residue(def->operands[0]);
    const auto [db, rb] = residue(def->operands[1]);
    const int64_t d = std::min(da, db);
    return {d, (ra + rb) % d};
  }
  // a % b keeps a's remainder modulo a power of two dividing b.
  if (def && def->kind == OpKind::Rem) {
    const auto [da, ra] = residue(def->operands[0]);
    const int64_t d = std::min(da, of(def->operands[1]));
    return {d, ra % d};
  }
  // a & (2^m - 1) is a % 2^m of a non-negative a, and keeps a's low bits whatever a's sign.
  if (def && def->kind == OpKind::And) {
    const ir::Op& op = *def;
    for (size_t i : {size_t{1}, size_t{0}}) {
      const ir::Op* c = definer(op.operands[i]);
      if (!c || c->kind != OpKind::Constant) continue;
      const int64_t* mask = std::get_if<int64_t>(&c->attrs.at("value"));
      if (!mask || *mask <= 0 || *mask >= kMax || ((*mask + 1) & *mask) != 0) continue;
      const auto [da, ra] = residue(op.operands[1 - i]);
      const int64_t d = std::min(da, *mask + 1);
      return {d, ra % d};
    }
  }
  if (def && def->kind == OpKind::Constant) {
    const int64_t* c = std::get_if<int64_t>(&def->attrs.at("value"));
    if (c) return {kMax, ((*c % kMax) + kMax) % kMax};
  }
  return {of(v), 0};
}

int64_t KnownDivisibility::compute(ir::ValueId v) {
  const ir::Type& t = k_.type(v);
  if (!t.is_scalar() && !t.is_pointer()) return 1;
  if (t.is_scalar() && !ir::is_integer(t.dtype)) return 1;
  if (!known(v)) return 1;
  if (param_[v] != 0) return param_[v];
  // A loop from a multiple of d by a multiple of d visits multiples of d.
  if (const ir::Op* loop = induction_[v])
    return std::min(of(loop->operands[0]), of(loop->operands[2]));
  const ir::Op* def = definer(v);
  return def ? of_op(*def) : 1;
}

int64_t KnownDivisibility::of_op(const ir::Op& op) {
  const auto operand = [&](size_t i) { return of(op.operands[i]); };
  const auto constant = [&](size_t i) -> std::optional<int64_t> {
    const ir::Op* def = definer(op.operands[i]);
    if (!def || def->kind != OpKind::Constant) return std::nullopt;
    const int64_t* c = std::get_if<int64_t>(&def->attrs.at("value"));
    return c ? std::optional<int64_t>(*c) : std::nullopt;
  };
  switch (op.kind) {
    case OpKind::Constant: {
      const int64_t* c = std::get_if<int64_t>(&op.attrs.at("value"));
      return c ? low_bit(*c) : 1;
    }
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Or:
    case OpKind::Xor:
    case OpKind::Min:
    case OpKind::Max:
      return std::min(operand(0), operand(1));
    case OpKind::And:  // a zero bit of either operand is a zero bit of the result
      return std::max(operand(0), operand(1));
    case OpKind::Mul:
      return capped(operand(0), operand(1));
    case OpKind::Rem: {  // a - trunc(a / c) * c
      return std::min(operand(0), operand(1));
    }
    case OpKind::Shl: {
      const std::optional<int64_t> s = constant(1);
      if (!s || *s < 0 || *s >= 31) return 1;
      return capped(operand(0), int64_t{1} << *s);
    }
    case OpKind::Shr: {
      const std::optional<int64_t> s = constant(1);
      if (!s || *s < 0 || *s >= 63) return 1;
      return std::max<int64_t>(1, operand(0) >> *s);
    }
    case OpKind::Select:
      return std::min(operand(1), operand(2));
    case OpKind::Cast: {  // integer to integer keeps the value where it fits
      const ir::Type& from = k_.type(op.operands[0]);
      if (!from.is_scalar() || !ir::is_integer(from.dtype)) return 1;
      const int64_t bits = 8 * ir::dtype_bytes(k_.type(op.results[0]).dtype);
      return std::min(operand(0), bits >= 31 ? kMax : int64_t{1} << bits);
    }
    case OpKind::PtrAdd:
      return std::min(operand(0),
                      capped(operand(1), ir::dtype_bytes(k_.type(op.results[0]).dtype)));
    case OpKind::ThreadgroupBuffer:
      return std::min(kThreadgroupBase, low_bit(op.int_attr("offset")));
    default:
      return 1;
  }
}

}  // namespace metile::lower
