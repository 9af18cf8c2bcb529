// The state of the kernel being traced on this thread. Internal to metile::dsl: kernel
// authors use KernelContext and the free functions of ops.h.
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metile/dsl/constexprs.h"
#include "metile/dsl/value.h"

namespace metile::dsl::detail {

struct TraceState {
  explicit TraceState(uint32_t serial_number) : serial(serial_number), builder(kernel) {}

  uint32_t serial;
  ir::Kernel kernel;
  ir::TileBuilder builder;
  Constexprs given;
  std::set<std::string> requested;
  // Value ids defined inside regions that have closed (a loop body, an if branch): a use
  // outside the region would break SSA dominance, so it is reported as a user error.
  struct ClosedRegion {
    ir::ValueId first, end;
    const char* what;
  };
  std::vector<ClosedRegion> closed;
  // The regions being built, innermost last: where their own values start, and for loops
  // the carried types (checked against the yields with a hint on how to fix them).
  struct OpenRegion {
    ir::ValueId first;
    std::vector<ir::Type> carried_types;
  };
  std::vector<OpenRegion> open;
};

// Makes `next` the trace of this thread (nullptr: none); returns the previous one.
TraceState* exchange_active(TraceState* next);
// The trace running on this thread; a UserError at `here` when there is none.
TraceState& current(const Here& here);
// The builder of the current trace with its location set to `here`.
ir::TileBuilder& builder_at(const Here& here);
metile::SourceLocation to_location(const Here& here);
[[noreturn]] void fail(const Here& here, const std::string& op, const std::string& rule);

// The id of `v` after checking it is usable here: non-empty, from this trace, and not
// defined inside a region that has closed. `op` names the operation for the message.
ir::ValueId use(const Value& v, const std::string& op, const Here& here);
Value wrap(ir::ValueId id);
std::vector<Value> wrap_all(const std::vector<ir::ValueId>& ids);

// An operand as a builder value: a Value as is, a number as a constant of `dtype`.
ir::ValueId materialize(const Operand& x, DType dtype, const std::string& op, const Here& here);
// The dtype a number adopts next to `other`: its dtype, or i32 beside a pointer.
DType dtype_for_numbers(const Value& other);
// The dtype of a lone number: i1 for bool, i32 for integers, f32 for floating point.
DType default_dtype(const Operand& x);
// Both operands as builder values; a number adopts the other operand's dtype.
std::pair<ir::ValueId, ir::ValueId> resolve(const Operand& a, const Operand& b,
                                            const std::string& op, const Here& here);

}  // namespace metile::dsl::detail
