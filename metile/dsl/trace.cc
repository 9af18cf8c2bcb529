#include "metile/dsl/trace.h"

#include <atomic>
#include <memory>

#include "metile/dsl/trace_state.h"

namespace metile::dsl {

using detail::fail;

std::string ConstexprValue::str() const {
  return is_int() ? std::to_string(as_int()) : std::to_string(as_double());
}

namespace {
std::string given_names(const Constexprs& given) {
  if (given.empty()) return "none";
  std::string r;
  for (const auto& [name, value] : given) r += (r.empty() ? "" : ", ") + name;
  return r;
}
}  // namespace

Ptr KernelContext::buffer(const std::string& name, DType dtype, const std::string& access,
                          Here here) {
  return detail::wrap(detail::core_at(state_, here).add_buffer(name, dtype, access));
}

Ptr KernelContext::buffer(const std::string& name, DType dtype, Here here) {
  return buffer(name, dtype, "", here);
}

Scalar KernelContext::scalar(const std::string& name, DType dtype, Here here) {
  return detail::wrap(detail::core_at(state_, here).add_scalar(name, dtype));
}

const ConstexprValue* KernelContext::lookup(const std::string& name, const Here& here) {
  if (name == "num_threads")
    fail(here, "constexpr '" + name + "'", "the name is reserved for set_num_threads()");
  state_.requested.insert(name);
  auto it = state_.given.find(name);
  return it == state_.given.end() ? nullptr : &it->second;
}

void KernelContext::record(const std::string& name, const ConstexprValue& v) {
  if (v.is_int())
    state_.core.set_constexpr(name, v.as_int());
  else
    state_.core.set_constexpr(name, v.as_double());
}

int64_t KernelContext::constexpr_int(const std::string& name, Here here) {
  const ConstexprValue* v = lookup(name, here);
  if (!v)
    fail(here, "constexpr '" + name + "'",
         "no value given; pass it to trace() (given: " + given_names(state_.given) + ")");
  if (!v->is_int()) fail(here, "constexpr '" + name + "'", "must be an integer, got " + v->str());
  record(name, *v);
  return v->as_int();
}

double KernelContext::constexpr_float(const std::string& name, Here here) {
  const ConstexprValue* v = lookup(name, here);
  if (!v)
    fail(here, "constexpr '" + name + "'",
         "no value given; pass it to trace() (given: " + given_names(state_.given) + ")");
  record(name, ConstexprValue(v->as_double()));
  return v->as_double();
}

int64_t KernelContext::constexpr_int(const std::string& name, int64_t default_value, Here here) {
  if (!lookup(name, here)) {
    record(name, ConstexprValue(default_value));
    return default_value;
  }
  return constexpr_int(name, here);
}

double KernelContext::constexpr_float(const std::string& name, double default_value, Here here) {
  if (!lookup(name, here)) {
    record(name, ConstexprValue(default_value));
    return default_value;
  }
  return constexpr_float(name, here);
}

void KernelContext::set_num_threads(int64_t n, Here here) {
  detail::core_at(state_, here).set_num_threads(n);
}

const std::string& KernelContext::kernel_name() const {
  return state_.core.kernel().name;
}

ir::Kernel trace(const std::string& name, const KernelFunction& fn, const Constexprs& constexprs,
                 Here here) {
  static std::atomic<uint32_t> next_serial{1};
  if (name.empty()) fail(here, "trace", "the kernel needs a name");
  auto state = std::make_unique<detail::TraceState>(next_serial++, name);
  state->given = constexprs;

  // Restores the enclosing trace (if any) however fn exits.
  struct Activation {
    detail::TraceState* previous;
    ~Activation() { detail::exchange_active(previous); }
  } activation{detail::exchange_active(state.get())};

  KernelContext context(*state);
  fn(context);

  for (const auto& [given, value] : constexprs)
    if (!state->requested.count(given))
      fail(here, "trace('" + name + "')",
           "constexpr '" + given + "' is not used by the kernel (misspelt?)");
  return state->core.finish();
}

}  // namespace metile::dsl
