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

// Whether values of this dtype may wrap where the guard must rule it out (32-bit and
// narrower integers; 64-bit indices are taken not to wrap, as the grouped indices are).
bool may_wrap(ir::DType t);

}  // namespace metile::lower
