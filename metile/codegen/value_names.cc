#include "metile/codegen/value_names.h"

#include <cctype>
#include <set>

#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

std::string sanitize(const std::string& hint) {
  std::string s;
  for (char c : hint) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  return s;
}

}  // namespace

bool is_usable_identifier(const std::string& name, const CDialect& dialect) {
  return !name.empty() && sanitize(name) == name && !dialect.is_reserved(name);
}

std::string parameter_source_name(const std::string& name, const CDialect& dialect) {
  if (is_usable_identifier(name, dialect)) return name;
  const std::string renamed = name + "_arg";
  return !name.empty() && sanitize(name) == name && is_usable_identifier(renamed, dialect)
             ? renamed
             : std::string();
}

ValueNames::ValueNames(const ir::Kernel& kernel, const CDialect& dialect)
    : names_(kernel.types.size()) {
  std::set<std::string> taken;
  for (const ir::Param& p : kernel.params) {
    const std::string name = parameter_source_name(p.name, dialect);
    if (name.empty())
      throw UserError("kernel '" + kernel.name + "': parameter name '" + p.name +
                      "' is not usable in " + std::string(dialect.table().language) +
                      " (not an identifier); rename the parameter");
    if (!taken.insert(name).second)
      throw UserError("kernel '" + kernel.name + "': two parameters are named '" + name + "'");
    names_[p.value] = name;
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
    if (dialect.is_reserved(name) || taken.count(name)) name += "_" + std::to_string(v);
    // Some hints stay reserved with any suffix (those holding "__").
    if (dialect.is_reserved(name)) name = "v" + std::to_string(v);
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
