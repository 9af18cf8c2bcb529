#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "metile/ir/ir.h"

namespace metile::transform {

// The intervals of the integer values canonicalize has seen: constants, splats, aranges and
// their broadcasts, sums, differences and products, each kept only when it provably stays
// inside its dtype (a value that could wrap has none). They let a comparison that every
// element meets fold: with a Schedule's specialised scalars a full tile's mask
// `arange(0, B) < n` with n >= B is true, as Triton folds a mask against a constexpr bound.
class IntegerIntervals {
 public:
  struct Interval {
    int64_t lo, hi;
  };

  // Records the interval of op's result, if it has one; op's operands must be recorded first.
  void record(const ir::Kernel& k, const ir::Op& op);
  std::optional<Interval> of(ir::ValueId v) const;
  // `a pred b` for every element (pred: lt, le, gt, ge, eq, ne), when the intervals decide it.
  std::optional<bool> decide(const std::string& pred, ir::ValueId a, ir::ValueId b) const;

 private:
  std::map<ir::ValueId, Interval> known_;
};

}  // namespace metile::transform
