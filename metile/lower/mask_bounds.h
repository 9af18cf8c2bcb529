// The masks of a grouped access (group_vector_accesses.h) as bounds on integers a constant
// apart: `x + d < n` holds for every d of a group when it holds for the largest d, provided
// the x + d do not wrap. So the packed path's guard tests one comparison per family of masks
// (the extreme one) plus, for 32-bit integers, that the widened extremes are the constant
// apart (a wrapping range cannot fake it), instead of every mask; verify_vector_accesses
// accepts a fallback mask that a comparison of the guard implies, with the same checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/lower/known_divisibility.h"
#include "metile/lower/vector_index.h"

namespace metile::lower {

// An order comparison read as `varying pred invariant`, pred one of lt, le, gt, ge (flipped
// when the varying side is the comparison's right operand).
struct Bound {
  ir::ValueId leaf = ir::kNoValue;  // the cmp's result
  ir::ValueId varying = ir::kNoValue;
  ir::ValueId invariant = ir::kNoValue;
  std::string pred;
  // Whether the comparison bounds the varying side from above (the largest one decides).
  bool upper() const { return pred == "lt" || pred == "le"; }
};

// The conjuncts of an i1 value: its and-tree's leaves, in order, each once.
std::vector<ir::ValueId> conjuncts(const IndexAnalysis& index, ir::ValueId cond);

// `leaf` as a bound whose varying side is its left (side 0) or right (side 1) operand;
// nullopt unless leaf is an order comparison of integers.
std::optional<Bound> bound_of(const ir::Kernel& k, const IndexAnalysis& index, ir::ValueId leaf,
                              int side);

// b's varying value minus a's when both bound one invariant in one direction and their
// varying values are a constant apart; nullopt otherwise.
std::optional<int64_t> bound_offset(const IndexAnalysis& index, const Bound& a, const Bound& b);

// 32-bit values low .. high that the guard requires to be exactly span apart, through the
// widened check i64(high) == i64(low) + span.
struct Range {
  ir::ValueId low = ir::kNoValue, high = ir::kNoValue;
  int64_t span = 0;
  bool operator==(const Range&) const = default;
};

// What a guard tests of the masks' conjuncts `leaves`: lone conjuncts and the tightest bound of
// each family (for lt/le the largest varying value, for gt/ge the smallest), in order of first
// appearance, and the ranges of the families' varying values that may wrap, each once, except
// `checked`, a range the caller checks anyway (the grouped indices').
struct MaskTerms {
  std::vector<ir::ValueId> conjuncts;
  std::vector<Range> ranges;
};
MaskTerms mask_terms(const ir::Kernel& k, const IndexAnalysis& index,
                     const std::vector<ir::ValueId>& leaves, const Range& checked);

// Whether `b` decides a group of `width` elements alone: with b's varying value x and
// invariant n multiples of width, and pred lt or ge, x + d pred n equals x pred n for every
// 0 <= d < width (and x + d does not wrap).
bool decides_group(const Bound& b, int64_t width, KnownDivisibility& divisibility);

// Whether values of this dtype may wrap where the guard must rule it out (32-bit and
// narrower integers; 64-bit indices are taken not to wrap, as the grouped indices are).
bool may_wrap(ir::DType t);

}  // namespace metile::lower
