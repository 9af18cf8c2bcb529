// Variable names of the emitted source: the value's name hint when it has one (made a valid
// identifier, unique and clear of the dialect's reserved words), else v<id>.
#pragma once

#include <string>
#include <vector>

#include "metile/codegen/dialect.h"
#include "metile/ir/ir.h"

namespace metile::codegen {

class ValueNames {
 public:
  // Parameters keep their names (parameter_source_name); a parameter whose name is not an
  // identifier is a UserError.
  ValueNames(const ir::Kernel& kernel, const CDialect& dialect);

  const std::string& operator[](ir::ValueId v) const;

 private:
  std::vector<std::string> names_;
};

// Whether `name` may name a kernel or parameter in the emitted source.
bool is_usable_identifier(const std::string& name, const CDialect& dialect);

// A parameter's name in the emitted source: its own, or, where the dialect reserves it (a
// keyword or a built-in function such as MSL's `cos`, which the body may call), with `_arg`
// appended. The ABI keeps the user's name. An empty string when the name is no identifier.
std::string parameter_source_name(const std::string& name, const CDialect& dialect);

}  // namespace metile::codegen
