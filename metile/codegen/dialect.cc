#include "metile/codegen/dialect.h"

#include "metile/codegen/literals.h"

#include <cctype>

#include "metile/codegen/c_types.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

// Every dialect is C++ (MSL is C++14-based, CUDA C++17): its keywords, and `main`.
constexpr std::string_view kCppKeywords[] = {
    "alignas", "alignof",   "and",    "asm",     "auto",      "bool",     "break",    "case",
    "catch",   "char",      "class",  "const",   "constexpr", "continue", "decltype", "default",
    "delete",  "do",        "double", "else",    "enum",      "explicit", "extern",   "false",
    "float",   "for",       "friend", "goto",    "if",        "inline",   "int",      "long",
    "mutable", "namespace", "new",    "not",     "operator",  "or",       "private",  "protected",
    "public",  "register",  "return", "short",   "signed",    "sizeof",   "static",   "struct",
    "switch",  "template",  "this",   "throw",   "true",      "try",      "typedef",  "typename",
    "union",   "unsigned",  "using",  "virtual", "void",      "volatile", "while",    "xor",
    "main"};

bool is_transcendental(MathFn fn) {
  switch (fn) {
    case MathFn::Abs:
    case MathFn::Min:
    case MathFn::Max:
    case MathFn::Fmod:
    case MathFn::Floor:
    case MathFn::Ceil:
      return false;
    case MathFn::Exp:
    case MathFn::Exp2:
    case MathFn::Log:
    case MathFn::Sqrt:
    case MathFn::Rsqrt:
    case MathFn::Tanh:
    case MathFn::Sin:
    case MathFn::Cos:
      return true;
  }
  throw InternalError("unknown math function " + std::to_string(static_cast<int>(fn)));
}

// name is `t`, or `t` followed by a vector width: "float", "float4".
bool names_scalar_or_vector_type(const std::string& name, std::string_view t) {
  return name.rfind(t, 0) == 0 &&
         (name.size() == t.size() ||
          (name.size() == t.size() + 1 && name.back() >= '2' && name.back() <= '4'));
}

}  // namespace

void CDialect::declare_dtype(ir::DType, Prelude&) const {}

std::string CDialect::vector_type(ir::DType t, int64_t width) const {
  if (!table_.vector_values)
    throw NotSupported("emit " + std::string(table_.language) + ": vector values (vec<" +
                       std::to_string(width) + "x" + std::string(ir::dtype_name(t)) +
                       ">) are not supported in " + std::string(table_.language));
  return std::string(scalar_type(t)) + std::to_string(width);
}

std::string CDialect::packed_vector_type(ir::DType t, int64_t width, Prelude&) const {
  return "packed_" + std::string(scalar_type(t)) + std::to_string(width);
}

std::string CDialect::packed_literal(ir::DType, const std::string& type,
                                     const std::vector<std::string>& elements) const {
  std::string text = type + "(";
  for (size_t i = 0; i < elements.size(); ++i) text += (i ? ", " : "") + elements[i];
  return text + ")";
}

std::string CDialect::packed_access(const std::string& ptr, const std::string& type,
                                    bool read_only) const {
  return "((" + std::string(table_.device_space) + (read_only ? "const " : "") + type + "*)(" +
         ptr + "))[0]";
}

std::string CDialect::packed_store(ir::DType, int64_t, const std::string& type,
                                   const std::string& ptr, const std::string& value,
                                   Prelude&) const {
  return packed_access(ptr, type, false) + " = " + value + ";";
}

std::optional<std::string> CDialect::hinted_load(const std::string&, const std::string&,
                                                 const std::string&, Prelude&) const {
  return std::nullopt;
}

std::optional<std::string> CDialect::hinted_store(const std::string&, const std::string&,
                                                  const std::string&, const std::string&,
                                                  Prelude&) const {
  return std::nullopt;
}

std::string CDialect::packed_element(ir::DType, const std::string& vector, int64_t index) const {
  // Past four, the fields of CUDA's eight-element prelude structs (MSL's vectors stop at
  // four).
  static constexpr std::string_view kComponents[] = {"x", "y", "z", "w", "e4", "e5", "e6", "e7"};
  return vector + "." + std::string(kComponents[index]);
}

std::string CDialect::address_is_aligned(const std::string& ptr, int64_t bytes) const {
  return "(reinterpret_cast<" + std::string(table_.pointer_integer_type) + ">(" + ptr + ") & " +
         std::to_string(bytes - 1) + ") == 0";
}

std::string CDialect::convert(const std::string& to, const std::string& expr) const {
  return to + "(" + expr + ")";
}

std::string CDialect::cast(const ir::Type& from, const ir::Type& to, const std::string& expr,
                           Prelude& prelude) const {
  if (ir::is_fp8(from.dtype) || ir::is_fp8(to.dtype)) return float8_cast(from, to, expr, prelude);
  const bool narrow_integer = to.dtype == ir::DType::i8 || to.dtype == ir::DType::u8 ||
                              to.dtype == ir::DType::i16 || to.dtype == ir::DType::u16;
  if (ir::is_float(from.dtype) && narrow_integer)
    return saturating_byte_cast(from, to, expr, prelude);
  auto via = [&](ir::DType t) { return table_.cast_via_float[static_cast<int>(t)]; };
  const bool via_float = (via(from.dtype) || via(to.dtype)) && from.dtype != ir::DType::f32 &&
                         to.dtype != ir::DType::f32;
  std::string value = expr;
  if (via_float) value = "static_cast<" + float_type_name(from, *this) + ">(" + value + ")";
  return "static_cast<" + type_name(to, *this) + ">(" + value + ")";
}

std::string CDialect::inline_asm(const std::string&, const ir::Type&,
                                 const std::vector<std::pair<std::string, ir::Type>>&,
                                 const std::string&, const std::string&, bool) const {
  throw NotSupported("emit " + std::string(table_.language) +
                     ": inline_asm_elementwise is inline PTX, which runs only on the cuda "
                     "device (target sm90), not on this target");
}

std::string CDialect::saturating_byte_cast(const ir::Type& from, const ir::Type& to,
                                           const std::string& expr, Prelude& prelude) const {
  if (!from.is_scalar())
    throw NotSupported("emit " + std::string(table_.language) + ": converting " + from.str() +
                       " to " + to.str() + " (8- and 16-bit conversions of floats take scalars)");
  const std::string T(scalar_type(to.dtype));
  const std::string fn =
      std::string(table_.helper_prefix) + "saturate_" + std::string(ir::dtype_name(to.dtype));
  const ir::IntegerRange r = ir::integer_range(to.dtype);
  const std::string lo = std::to_string(r.min), hi = std::to_string(r.max);
  // An f64 source truncates as a double: through float it could round up to the next integer.
  const bool wide = from.dtype == ir::DType::f64;
  const std::string F = wide ? "double" : "float", suffix = wide ? ".0" : ".0f";
  prelude.add(fn + (wide ? "_f64" : ""), to.dtype,
              std::string(table_.body_qualifier) + " " + T + " " + fn + "(" + F +
                  " x) {\n  if (x != x) return 0;\n  if (x <= " + lo + suffix + ") return " + lo +
                  ";\n  if (x >= " + hi + suffix + ") return " + hi + ";\n  return static_cast<" +
                  T + ">(static_cast<int>(x));\n}\n");
  const std::string value =
      from.dtype == ir::DType::f32 || wide ? expr : convert(float_type_name(from, *this), expr);
  return fn + "(" + value + ")";
}

std::string CDialect::infix(std::string_view op, const ir::Type&, const std::string& a,
                            const std::string& b) const {
  return a + " " + std::string(op) + " " + b;
}

std::string CDialect::prefix(std::string_view op, const ir::Type&, const std::string& a) const {
  return std::string(op) + a;
}

std::string CDialect::select(const ir::Type& c_type, const std::string& c, const std::string& a,
                             const std::string& b) const {
  // ?: wants one condition; a per-element condition needs the language's select.
  if (c_type.is_vector())
    return std::string(table_.vector_select) + "(" + b + ", " + a + ", " + c + ")";
  return c + " ? " + a + " : " + b;
}

std::string CDialect::math_call(MathFn fn, bool fast, const ir::Type& t,
                                const std::vector<std::string>& args, Prelude&) const {
  const bool widen = table_.math_in_float[static_cast<int>(t.dtype)];
  std::string call = math_function(fn, fast, widen ? ir::DType::f32 : t.dtype) + "(";
  for (size_t i = 0; i < args.size(); ++i)
    call += (i ? ", " : "") + (widen ? convert(float_type_name(t, *this), args[i]) : args[i]);
  call += ")";
  return widen ? convert(type_name(t, *this), call) : call;
}

std::string CDialect::math_function(MathFn fn, bool fast, ir::DType) const {
  std::string name;
  if (is_transcendental(fn))
    name = std::string(fast ? table_.fast_math_prefix : table_.precise_math_prefix);
  return name + std::string(table_.math_functions[static_cast<size_t>(fn)]);
}

ir::DType CDialect::collective_dtype(ir::DType t) const {
  switch (table_.collective_routes[static_cast<int>(t)]) {
    case Route::Direct:
      return t;
    case Route::ViaFloat:
      return ir::DType::f32;
    case Route::ViaInt:
      return ir::DType::i32;
    case Route::Unsupported:
      break;
  }
  throw InternalError("the walker rejects unsupported collective dtypes");
}

std::string CDialect::collective(Collective c, const ir::Type& t, const std::string& value,
                                 const std::string& lane, Prelude&) const {
  const bool widen = collective_dtype(t.dtype) != t.dtype;
  const ir::Type wide = t.with_dtype(collective_dtype(t.dtype));
  std::string call = std::string(table_.collectives[static_cast<size_t>(c)]) + "(";
  if (!lane.empty() && !table_.collective_members.empty())
    call += std::string(table_.collective_members) + ", ";
  call += widen ? convert(type_name(wide, *this), value) : value;
  if (!lane.empty()) call += ", " + convert(std::string(table_.lane_type), lane);
  call += ")";
  return widen ? convert(type_name(t, *this), call) : call;
}

std::string CDialect::integer_floordiv(ir::DType t, const std::string& a, const std::string& b,
                                       Prelude& prelude) const {
  const std::string T(scalar_type(t));
  const std::string fn = std::string(table_.helper_prefix) + "floordiv";
  // The truncated quotient is one too large when the division is inexact and the operands
  // have opposite signs.
  prelude.add("floordiv", t,
              std::string(table_.body_qualifier) + " " + T + " " + fn + "(" + T + " a, " + T +
                  " b) {\n  const " + T +
                  " q = a / b;\n  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n");
  return fn + "(" + a + ", " + b + ")";
}

std::string CDialect::barrier(BarrierScope scope, BarrierMem mem) const {
  const std::string_view fn =
      scope == BarrierScope::Threadgroup ? table_.threadgroup_barrier : table_.simdgroup_barrier;
  return std::string(fn) + "(" + std::string(table_.barrier_mem[static_cast<size_t>(mem)]) + ");";
}

std::string CDialect::special_float(SpecialFloat value, ir::DType t) const {
  const std::string word = value == SpecialFloat::NaN ? std::string(table_.nan_literal)
                           : value == SpecialFloat::Infinity
                               ? std::string(table_.infinity_literal)
                               : "-" + std::string(table_.infinity_literal);
  return t == ir::DType::f32 ? word : convert(std::string(scalar_type(t)), word);
}

std::string CDialect::threadgroup_block(int64_t bytes) const {
  // Zero-length arrays are invalid, so an unused static block still takes 16 bytes.
  const std::string size = table_.block_dynamic ? "" : std::to_string(bytes > 0 ? bytes : 16);
  return std::string(table_.block_declaration) + " " + std::string(table_.block_name) + "[" + size +
         "]" + std::string(table_.block_attributes) + ";";
}

std::string CDialect::assert_failed(const std::string& /*kernel*/, const std::string& message,
                                    const SourceLocation& where, const std::string& thread) const {
  return "metile_device_assert_failed(" + message + ", " + string_literal(where.file) + ", " +
         std::to_string(where.line) + ", " + thread + ");";
}

std::string CDialect::print(const std::string& format, const std::vector<std::string>& args) const {
  std::string call = "metile_device_print(" + format;
  for (const std::string& a : args) call += ", " + a;
  return call + ");";
}

bool CDialect::is_reserved(const std::string& name) const {
  const DialectTable& d = table_;
  for (std::string_view r : kCppKeywords)
    if (name == r) return true;
  for (std::string_view r : d.reserved_words)
    if (name == r) return true;
  for (const GeometryArg& g : d.geometry)
    if (name == g.name) return true;
  // A local named like a function, type or literal the source uses would shadow it.
  for (std::string_view f : d.math_functions)
    if (name == f) return true;
  for (std::string_view f : d.collectives)
    if (name == f) return true;
  for (std::string_view f : {d.threadgroup_barrier, d.simdgroup_barrier, d.vector_select,
                             d.lane_type, d.block_name, d.nan_literal, d.infinity_literal})
    if (name == f) return true;
  for (std::string_view t : d.scalar_types)
    if (names_scalar_or_vector_type(name, t)) return true;
  // Identifiers with a double underscore or a leading underscore and capital belong to the
  // implementation in C++.
  if (name.find("__") != std::string::npos) return true;
  if (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])))
    return true;
  if (name.rfind(d.helper_prefix, 0) == 0) return true;
  for (std::string_view p : d.reserved_prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace metile::codegen
