#include "metile/dsl/trace_state.h"

#include <cmath>

namespace metile::dsl::detail {

namespace {
thread_local TraceState* active = nullptr;
}  // namespace

TraceState::TraceState(uint32_t serial_number, const std::string& name)
    : serial(serial_number), core(name, "pass it out as a carried value or a result") {}

TraceState* exchange_active(TraceState* next) {
  TraceState* previous = active;
  active = next;
  return previous;
}

metile::SourceLocation to_location(const Here& here) {
  return {here.file_name(), static_cast<int>(here.line())};
}

void fail(const Here& here, const std::string& op, const std::string& rule) {
  throw UserError(op + ": " + rule, to_location(here));
}

TraceState& current(const Here& here) {
  if (!active)
    fail(here, "metile::dsl",
         "DSL operations can only run inside a kernel function called by trace()");
  return *active;
}

ir::TileBuilder& builder_at(const Here& here) {
  return core_at(here).builder();
}

trace::KernelTrace& core_at(TraceState& s, const Here& here) {
  s.core.builder().set_location(to_location(here));
  return s.core;
}

trace::KernelTrace& core_at(const Here& here) {
  return core_at(current(here), here);
}

ir::ValueId use(const Value& v, const std::string& op, const Here& here) {
  TraceState& s = current(here);
  if (!v.valid()) fail(here, op, "got an empty Value (default-constructed, never assigned)");
  if (v.trace_serial() != s.serial)
    fail(here, op, "value %" + std::to_string(v.id()) + " belongs to another kernel's trace");
  return s.core.usable(v.id()) ? v.id() : core_at(s, here).use(v.id(), op);
}

Value wrap(ir::ValueId id) {
  return Value::from_id(id, active ? active->serial : 0);
}

std::vector<Value> wrap_all(const std::vector<ir::ValueId>& ids) {
  std::vector<Value> r;
  for (ir::ValueId id : ids) r.push_back(wrap(id));
  return r;
}

DType dtype_for_numbers(const Value& other) {
  return other.is_pointer() ? DType::i32 : other.dtype();
}

DType default_dtype(const Operand& x) {
  if (x.is_bool_number()) return DType::i1;
  return x.is_float_number() ? DType::f32 : DType::i32;
}

ir::ValueId materialize(const Operand& x, DType dtype, const std::string& op, const Here& here) {
  if (x.is_value()) return use(x.value(), op, here);
  ir::TileBuilder& b = builder_at(here);
  if (ir::is_float(dtype)) return b.constant(x.float_number(), dtype);
  if (x.is_float_number() && x.float_number() != std::floor(x.float_number()))
    fail(here, op,
         "the C++ number " + std::to_string(x.float_number()) + " is not an integer but the " +
             "other operand is " + std::string(ir::dtype_name(dtype)) +
             "; cast that operand to a float dtype first");
  int64_t n = x.is_float_number() ? static_cast<int64_t>(x.float_number()) : x.int_number();
  return b.constant_int(n, dtype);
}

std::pair<ir::ValueId, ir::ValueId> resolve(const Operand& a, const Operand& b,
                                            const std::string& op, const Here& here) {
  if (!a.is_value() && !b.is_value())
    fail(here, op, "needs at least one metile Value operand, got two C++ numbers");
  // Check the Values first, so that a stale Value is reported before its type is read.
  if (a.is_value()) use(a.value(), op, here);
  if (b.is_value()) use(b.value(), op, here);
  DType da = a.is_value() ? dtype_for_numbers(a.value()) : dtype_for_numbers(b.value());
  DType db = b.is_value() ? dtype_for_numbers(b.value()) : dtype_for_numbers(a.value());
  return {materialize(a, da, op, here), materialize(b, db, op, here)};
}

}  // namespace metile::dsl::detail
