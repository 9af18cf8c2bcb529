// Helper functions the emitted body calls, written into the source only when used.
#pragma once

#include <set>
#include <string>

#include "metile/codegen/dialect.h"
#include "metile/ir/types.h"

namespace metile::codegen {

class Prelude {
 public:
  explicit Prelude(const CDialect& dialect) : dialect_(dialect) {}

  // A call of integer division rounding toward negative infinity for signed scalar t
  // (C's `/` truncates toward zero).
  std::string floordiv(ir::DType t, const std::string& a, const std::string& b);

  // The helpers used so far, in a fixed order; "" when none.
  std::string text() const;

 private:
  const CDialect& dialect_;
  std::set<ir::DType> floordiv_types_;
};

}  // namespace metile::codegen
