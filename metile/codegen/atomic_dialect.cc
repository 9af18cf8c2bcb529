// The default rendering of atomics: MSL's <metal_atomic>, whose read-modify-writes are
// relaxed; the other orders of Triton's `sem` add a device-scope fence before (release) and
// after (acquire) the update. Each (kind, dtype, sem) is one prelude helper taking the plain
// device pointer, so the body never names atomic types.
#include "metile/codegen/c_types.h"
#include "metile/codegen/dialect.h"
#include "metile/support/errors.h"

namespace metile::codegen {

std::string CDialect::atomic(const std::string& kind, ir::DType t, const std::string& ptr,
                             const std::string& a, const std::string& b, const std::string& sem,
                             const std::string&, Prelude& prelude) const {
  const std::string type = type_name(ir::Type::scalar(t), *this);
  const std::string atomic_type = t == ir::DType::f32   ? "atomic_float"
                                  : t == ir::DType::u32 ? "atomic_uint"
                                                        : "atomic_int";
  const std::string name = "metile_atomic_" + kind + "_" + sem;
  const std::string fence =
      "  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);\n";
  const bool release = sem == "release" || sem == "acq_rel";
  const bool acquire = sem == "acquire" || sem == "acq_rel";
  const std::string target = "(device " + atomic_type + "*)p";
  std::string update;
  if (t == ir::DType::f32 && (kind == "max" || kind == "min")) {
    // No float max/min atomics: a float whose sign bit is clear orders as its bits read as a
    // signed int, one whose sign bit is set in reverse as unsigned bits, so max is the int
    // maximum for the first and the uint minimum for the second (min the other way round).
    const bool max = kind == "max";
    update = std::string("  const float old = as_type<int>(a) >= 0 ? as_type<float>(") +
             "atomic_fetch_" + (max ? "max" : "min") +
             "_explicit((device atomic_int*)p, as_type<int>(a), memory_order_relaxed)) : " +
             "as_type<float>(atomic_fetch_" + (max ? "min" : "max") +
             "_explicit((device atomic_uint*)p, as_type<uint>(a), memory_order_relaxed));\n";
  } else if (kind == "cas") {
    // A weak exchange may fail spuriously: retry while the value still equals cmp.
    update = "  " + type + " old = a;\n  while (!atomic_compare_exchange_weak_explicit(" + target +
             ", &old, b, memory_order_relaxed, memory_order_relaxed) && old == a) {}\n";
  } else {
    const std::string function =
        kind == "xchg" ? "atomic_exchange_explicit" : "atomic_fetch_" + kind + "_explicit";
    update =
        "  const " + type + " old = " + function + "(" + target + ", a, memory_order_relaxed);\n";
  }
  prelude.add(name, t,
              "static inline " + type + " " + name + "(device " + type + "* p, " + type + " a" +
                  (kind == "cas" ? ", " + type + " b" : "") + ") {\n" + (release ? fence : "") +
                  update + (acquire ? fence : "") + "  return old;\n}\n");
  return name + "(" + ptr + ", " + a + (kind == "cas" ? ", " + b : "") + ")";
}

}  // namespace metile::codegen
