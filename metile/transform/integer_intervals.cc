#include "metile/transform/integer_intervals.h"

#include <algorithm>
#include <array>
#include <utility>

namespace metile::transform {

namespace {
using Interval = IntegerIntervals::Interval;

// Signed integers only: an unsigned comparison of the same bits would need its own order.
bool tracked(ir::DType t) {
  return ir::is_integer(t) && ir::is_signed(t);
}

// The interval of `a op b` for op in {+, -, *}, if no corner overflows int64 and the result
// stays inside the dtype (the corners bound a sum, difference or product of intervals).
std::optional<Interval> combine(ir::OpKind op, Interval a, Interval b, ir::DType t) {
  const auto apply = [op](int64_t x, int64_t y, int64_t& r) {
    if (op == ir::OpKind::Add) return !__builtin_add_overflow(x, y, &r);
    if (op == ir::OpKind::Sub) return !__builtin_sub_overflow(x, y, &r);
    return !__builtin_mul_overflow(x, y, &r);
  };
  std::array<int64_t, 4> corners{};
  // x - y is smallest at (lo, hi): the pairs below cover both orders.
  const std::array<std::pair<int64_t, int64_t>, 4> pairs = {
      {{a.lo, b.lo}, {a.lo, b.hi}, {a.hi, b.lo}, {a.hi, b.hi}}};
  for (size_t i = 0; i < pairs.size(); ++i)
    if (!apply(pairs[i].first, pairs[i].second, corners[i])) return std::nullopt;
  const int64_t lo = *std::min_element(corners.begin(), corners.end());
  const int64_t hi = *std::max_element(corners.begin(), corners.end());
  const ir::IntegerRange range = ir::integer_range(t);
  if (!range.contains(lo) || !range.contains(hi)) return std::nullopt;
  return Interval{lo, hi};
}
}  // namespace

void IntegerIntervals::record(const ir::Kernel& k, const ir::Op& op) {
  if (op.results.size() != 1 || !tracked(k.type(op.results[0]).dtype)) return;
  const ir::ValueId result = op.results[0];
  switch (op.kind) {
    case ir::OpKind::Constant:
      if (auto* v = std::get_if<int64_t>(&op.attrs.at("value"))) known_[result] = {*v, *v};
      return;
    case ir::OpKind::Arange: {
      const int64_t start = op.int_attr_or("start", 0), end = op.int_attr_or("end", 0);
      if (end > start) known_[result] = {start, end - 1};
      return;
    }
    case ir::OpKind::Splat:
    case ir::OpKind::Broadcast:
    case ir::OpKind::ExpandDims:
      if (auto a = of(op.operands[0])) known_[result] = *a;
      return;
    case ir::OpKind::Add:
    case ir::OpKind::Sub:
    case ir::OpKind::Mul: {
      auto a = of(op.operands[0]), b = of(op.operands[1]);
      if (!a || !b) return;
      if (auto c = combine(op.kind, *a, *b, k.type(result).dtype)) known_[result] = *c;
      return;
    }
    default:
      return;
  }
}

std::optional<IntegerIntervals::Interval> IntegerIntervals::of(ir::ValueId v) const {
  auto it = known_.find(v);
  if (it == known_.end()) return std::nullopt;
  return it->second;
}

std::optional<bool> IntegerIntervals::decide(const std::string& pred, ir::ValueId a,
                                             ir::ValueId b) const {
  auto x = of(a), y = of(b);
  if (!x || !y) return std::nullopt;
  // a < b for every pair, or a >= b for every pair, and so on.
  const auto less = [](Interval p, Interval q) -> std::optional<bool> {
    if (p.hi < q.lo) return true;
    if (p.lo >= q.hi) return false;
    return std::nullopt;
  };
  const auto less_equal = [](Interval p, Interval q) -> std::optional<bool> {
    if (p.hi <= q.lo) return true;
    if (p.lo > q.hi) return false;
    return std::nullopt;
  };
  if (pred == "lt") return less(*x, *y);
  if (pred == "le") return less_equal(*x, *y);
  if (pred == "gt") return less(*y, *x);
  if (pred == "ge") return less_equal(*y, *x);
  const bool same = x->lo == x->hi && y->lo == y->hi && x->lo == y->lo;
  const bool disjoint = x->hi < y->lo || y->hi < x->lo;
  if (pred == "eq" && (same || disjoint)) return same;
  if (pred == "ne" && (same || disjoint)) return !same;
  return std::nullopt;
}

}  // namespace metile::transform
