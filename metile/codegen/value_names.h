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
  // Parameter names are kept exactly (the runtime binds them by name); a parameter whose name
  // is not a usable identifier is a UserError.
  ValueNames(const ir::Kernel& kernel, const CDialect& dialect);

  const std::string& operator[](ir::ValueId v) const;

 private:
  std::vector<std::string> names_;
};

// Whether `name` may name a kernel or parameter in the emitted source.
bool is_usable_identifier(const std::string& name, const CDialect& dialect);

}  // namespace metile::codegen
