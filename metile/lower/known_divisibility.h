// The powers of two that integer values and addresses of Metal IR are known to be multiples
// of, in every thread: from constants, the parameters' divisibility (Triton's specialisation
// of integers and GPU addresses that are multiples of 16, ir::Param), the threadgroup
// buffers' offsets, and the integer ops that keep low zero bits (add, mul, shifts, and,
// ptr_add ...). group_vector_accesses drops the run-time alignment and wrap tests a
// divisibility proves, and verify_vector_accesses proves them again.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "metile/ir/ir.h"

namespace metile::lower {

class KnownDivisibility {
 public:
  explicit KnownDivisibility(const ir::Kernel& k);

  // The largest known power of two dividing v (an integer's value; a pointer's address in
  // bytes), at most kMax; 1 when nothing is known.
  int64_t of(ir::ValueId v);
  // Whether the integers v .. v + span do not wrap: v is r more than a multiple of a power of
  // two D (adds of constants read as the remainder, kept by a rem) with r + span < D.
  bool no_wrap(ir::ValueId v, int64_t span);

  static constexpr int64_t kMax = int64_t{1} << 30;
  // The dialects declare threadgroup memory aligned to 16 bytes.
  static constexpr int64_t kThreadgroupBase = 16;

 private:
  int64_t compute(ir::ValueId v);
  // (D, r): v is r more than a multiple of D, 0 <= r < D.
  std::pair<int64_t, int64_t> residue(ir::ValueId v);
  int64_t of_op(const ir::Op& op);
  // The op defining v (nullptr for parameters, region arguments and values made later).
  const ir::Op* definer(ir::ValueId v) const { return known(v) ? definer_[v] : nullptr; }
  bool known(ir::ValueId v) const { return v >= 0 && static_cast<size_t>(v) < definer_.size(); }

  // Indexed by value (group_vector_accesses rebuilds the analysis after each rewrite, so the
  // tables are vectors, not maps).
  const ir::Kernel& k_;
  std::vector<const ir::Op*> definer_;
  std::vector<int64_t> param_;            // a parameter's divisibility; 0: not a parameter
  std::vector<const ir::Op*> induction_;  // a for's induction variable: the for
  std::vector<int64_t> memo_;             // 0: not computed yet
};

}  // namespace metile::lower
