#include "metile/codegen/value_names.h"

#include <cctype>
#include <set>
#include <string_view>

#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

// C++ keywords and the Metal/CUDA words a kernel's locals could clash with. Names starting
// with the helper prefix, tg_mem and the geometry arguments are reserved separately.
constexpr std::string_view kReserved[] = {
    "alignas",  "alignof",  "and",         "asm",       "auto",      "bool",     "break",
    "case",     "catch",    "char",        "class",     "const",     "constant", "constexpr",
    "continue", "decltype", "default",     "delete",    "device",    "do",       "double",
    "else",     "enum",     "explicit",    "extern",    "false",     "float",    "for",
    "friend",   "goto",     "half",        "bfloat",    "if",        "inline",   "int",
    "kernel",   "long",     "metal",       "mutable",   "namespace", "new",      "not",
    "operator", "or",       "private",     "protected", "public",    "register", "return",
    "short",    "signed",   "sizeof",      "static",    "struct",    "switch",   "template",
    "this",     "thread",   "threadgroup", "throw",     "true",      "try",      "typedef",
    "typename", "uchar",    "uint",        "ulong",     "union",     "unsigned", "ushort",
    "using",    "virtual",  "void",        "volatile",  "while",     "xor",      "fast",
    "precise",  "min",      "max",         "abs",       "fmod",      "floor",    "exp",
    "exp2",     "log",      "sqrt",        "rsqrt",     "tanh",      "sin",      "cos",
    "main",     "INFINITY", "NAN",         "mem_flags", "tg_mem",    "vec",      "as_type",
    "atomic",   "sampler",  "texture"};

bool reserved(const std::string& name, const CDialect& dialect) {
  for (std::string_view r : kReserved)
    if (name == r) return true;
  const DialectTable& d = dialect.table();
  for (const GeometryArg& g : d.geometry)
    if (name == g.name) return true;
  // A local named like a function or type the body calls would shadow it.
  for (std::string_view f :
       {d.simd_sum, d.simd_max, d.simd_min, d.simd_shuffle, d.simd_shuffle_xor, d.simd_broadcast,
        d.threadgroup_barrier, d.simdgroup_barrier, d.vector_select, d.lane_type})
    if (name == f) return true;
  for (std::string_view t : d.scalar_types)
    if (name.rfind(t, 0) == 0 &&
        (name.size() == t.size() ||
         (name.size() == t.size() + 1 && name.back() >= '2' && name.back() <= '4')))
      return true;
  // Identifiers with a double underscore or a leading underscore and capital belong to the
  // implementation in C++.
  if (name.find("__") != std::string::npos) return true;
  if (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])))
    return true;
  return name.rfind(d.helper_prefix, 0) == 0 || name.rfind("packed_", 0) == 0;
}

std::string sanitize(const std::string& hint) {
  std::string s;
  for (char c : hint) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  return s;
}

}  // namespace

bool is_usable_identifier(const std::string& name, const CDialect& dialect) {
  return !name.empty() && sanitize(name) == name && !reserved(name, dialect);
}

ValueNames::ValueNames(const ir::Kernel& kernel, const CDialect& dialect)
    : names_(kernel.types.size()) {
  std::set<std::string> taken;
  for (const ir::Param& p : kernel.params) {
    if (!is_usable_identifier(p.name, dialect))
      throw UserError("kernel '" + kernel.name + "': parameter name '" + p.name +
                      "' is not usable in " + std::string(dialect.table().language) +
                      " (a reserved word or not an identifier); rename the parameter");
    if (!taken.insert(p.name).second)
      throw UserError("kernel '" + kernel.name + "': two parameters are named '" + p.name + "'");
    names_[p.value] = p.name;
  }
  auto hint = [&](size_t v) {
    return v < kernel.value_names.size() ? kernel.value_names[v] : std::string();
  };
  // Unnamed values own v<id>, so a hint never takes another value's default name.
  for (size_t v = 0; v < names_.size(); ++v)
    if (names_[v].empty() && hint(v).empty() && taken.insert("v" + std::to_string(v)).second)
      names_[v] = "v" + std::to_string(v);
  for (size_t v = 0; v < names_.size(); ++v) {
    if (!names_[v].empty()) continue;
    std::string name = hint(v).empty() ? "v" + std::to_string(v) : sanitize(hint(v));
    if (reserved(name, dialect) || taken.count(name)) name += "_" + std::to_string(v);
    // Some hints stay reserved with any suffix (those holding "__").
    if (reserved(name, dialect)) name = "v" + std::to_string(v);
    while (taken.count(name)) name += "_";
    taken.insert(name);
    names_[v] = name;
  }
}

const std::string& ValueNames::operator[](ir::ValueId v) const {
  METILE_ASSERT(v >= 0 && static_cast<size_t>(v) < names_.size(),
                "value %" + std::to_string(v) + " has no name");
  return names_[v];
}

}  // namespace metile::codegen
