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

bool may_wrap(ir::DType t) {
  return t != ir::DType::i64;
}

namespace {

// Bounds of one invariant whose varying values are a constant apart, or a lone conjunct.
struct Family {
  ir::ValueId leaf = ir::kNoValue;
  std::vector<Bound> bounds;
  std::vector<int64_t> offsets;  // each bound's varying value minus the first's
};

class Families {
 public:
  Families(const ir::Kernel& k, const IndexAnalysis& index) : k_(k), index_(index) {}

  std::vector<Family> of(const std::vector<ir::ValueId>& leaves) const {
    std::vector<Family> out;
    for (ir::ValueId leaf : leaves)
      if (!join_any(out, leaf)) out.push_back(Family{leaf, {}, {}});
    return out;
  }

 private:
  // Adds leaf to the first family it joins, reading both its operands as the varying side.
  bool join_any(std::vector<Family>& families, ir::ValueId leaf) const {
    for (Family& f : families)
      for (int side = 0; side < 2; ++side) {
        const std::optional<Bound> b = bound_of(k_, index_, leaf, side);
        const std::optional<Bound> rep =
            f.bounds.empty() ? bound_of(k_, index_, f.leaf, side) : f.bounds[0];
        const std::optional<int64_t> d = b && rep ? bound_offset(index_, *rep, *b) : std::nullopt;
        if (!d) continue;
        if (f.bounds.empty()) {
          f.bounds.push_back(*rep);
          f.offsets.push_back(0);
        }
        f.bounds.push_back(*b);
        f.offsets.push_back(*d);
        return true;
      }
    return false;
  }

  const ir::Kernel& k_;
  const IndexAnalysis& index_;
};

}  // namespace

MaskTerms mask_terms(const ir::Kernel& k, const IndexAnalysis& index,
                     const std::vector<ir::ValueId>& leaves, const Range& checked) {
  MaskTerms terms;
  for (const Family& f : Families(k, index).of(leaves)) {
    if (f.bounds.empty()) {
      terms.conjuncts.push_back(f.leaf);
      continue;
    }
    const auto [low, high] = std::minmax_element(f.offsets.begin(), f.offsets.end());
    const size_t low_at = low - f.offsets.begin(), high_at = high - f.offsets.begin();
    terms.conjuncts.push_back(f.bounds[f.bounds[0].upper() ? high_at : low_at].leaf);
    const Range range{f.bounds[low_at].varying, f.bounds[high_at].varying, *high - *low};
    const bool known =
        std::find(terms.ranges.begin(), terms.ranges.end(), range) != terms.ranges.end();
    if (range.span > 0 && may_wrap(k.type(range.low).dtype) && !known && !(range == checked))
      terms.ranges.push_back(range);
  }
  return terms;
}

bool decides_group(const Bound& b, int64_t width, KnownDivisibility& divisibility) {
  return (b.pred == "lt" || b.pred == "ge") && divisibility.of(b.varying) >= width &&
         divisibility.of(b.invariant) >= width;
}

}  // namespace metile::lower
