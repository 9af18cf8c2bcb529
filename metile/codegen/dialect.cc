#include "metile/codegen/dialect.h"

namespace metile::codegen {

std::string CDialect::vector_type(ir::DType t, int64_t width) const {
  return std::string(scalar_type(t)) + std::to_string(width);
}

std::string CDialect::convert(const std::string& to, const std::string& expr) const {
  return to + "(" + expr + ")";
}

}  // namespace metile::codegen
