// The state of the kernel being traced on this thread. Internal to metile::dsl: kernel
// authors use KernelContext and the free functions of ops.h.
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "metile/dsl/constexprs.h"
#include "metile/dsl/value.h"
#include "metile/trace/kernel_trace.h"

namespace metile::dsl::detail {

// The rules shared with the Python tracer (regions, accesses, parameters) live in the
// tracing core; this adds what is C++'s own: a serial number that tells the Values of
// different traces apart, and the constexprs given to trace() and asked for by the kernel.
struct TraceState {
  TraceState(uint32_t serial_number, const std::string& name);

  uint32_t serial;
  trace::KernelTrace core;
  Constexprs given;
  std::set<std::string> requested;
};

// Makes `next` the trace of this thread (nullptr: none); returns the previous one.
TraceState* exchange_active(TraceState* next);
// The trace running on this thread; a UserError at `here` when there is none.
TraceState& current(const Here& here);
// The builder of the current trace with its location set to `here`.
ir::TileBuilder& builder_at(const Here& here);
// The tracing core of `s` (or of the current trace), its errors and ops located at `here`.
trace::KernelTrace& core_at(TraceState& s, const Here& here);
trace::KernelTrace& core_at(const Here& here);
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
