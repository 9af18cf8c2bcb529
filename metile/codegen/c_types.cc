#include "metile/codegen/c_types.h"

#include "metile/support/errors.h"

namespace metile::codegen {

std::string type_name(const ir::Type& t, const CDialect& dialect, bool read_only) {
  if (t.is_tile() || t.is_desc())
    throw UserError("emit " + std::string(dialect.table().language) + ": type " + t.str() +
                    " does not exist in Metal IR (lower the kernel first)");
  if (t.is_vector()) return dialect.vector_type(t.dtype, t.shape.at(0));
  if (t.is_matrix()) return dialect.matrix_type(t);
  const std::string scalar(dialect.scalar_type(t.dtype));
  if (!t.pointer) return scalar;
  const std::string_view space = t.space == ir::AddressSpace::Threadgroup
                                     ? dialect.table().threadgroup_space
                                     : dialect.table().device_space;
  return std::string(space) + (read_only ? "const " : "") + scalar + "*";
}

std::string float_type_name(const ir::Type& t, const CDialect& dialect) {
  return type_name(t.with_dtype(ir::DType::f32), dialect);
}

}  // namespace metile::codegen
