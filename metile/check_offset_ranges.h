// Launch-time proof that no address offset wraps (issue 10, item 5): with the grid, the
// threads per threadgroup and the scalar arguments known, every integer add, sub and mul that
// feeds an address (a ptr_add offset) gets the interval of values it can take, from
// constants, program ids, aranges and the arguments. One that leaves its dtype's range would
// compute a wrapped address: the launch is refused naming the expression, its source line and
// the range it reaches. Values the launch does not determine (loaded data, loop-carried
// values) are not claimed either way.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile {

// Built once per compiled kernel: which ops feed an address and how each value is defined;
// check() then only follows those ops for a launch's grid and scalars.
class OffsetRangeCheck {
 public:
  // [lo, hi] of every value a lane may hold; `wrapped`: an exact result left int64_t.
  struct Interval {
    int64_t lo = 0, hi = 0;
    bool wrapped = false;
  };

  // `tile` must outlive the check.
  explicit OffsetRangeCheck(const ir::Kernel& tile);

  // UserError "launch of K with grid (...): the offset `program_id(0) * 256` (file:line)
  // reaches ...". `scalars` maps integer scalar parameters (their values) to what the launch
  // passes.
  void check(std::array<int64_t, 3> grid, int threads_per_threadgroup,
             const std::map<ir::ValueId, int64_t>& scalars) const;

 private:
  using Intervals = std::vector<std::optional<Interval>>;  // indexed by ValueId

  // Sets op's interval in `known`; returns the interval of an add, sub or mul that leaves its
  // dtype (what follows it is not claimed).
  std::optional<Interval> visit(const ir::Op& op, std::array<int64_t, 3> grid, int threads,
                                Intervals& known) const;
  std::string expression(ir::ValueId v, int depth) const;

  const ir::Kernel& k_;
  std::vector<const ir::Op*> def_;          // the op defining each value, indexed by ValueId
  std::vector<const ir::Op*> address_ops_;  // ops whose result feeds an address, in order
};

}  // namespace metile
