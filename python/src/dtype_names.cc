#include "dtype_names.h"

#include "metile/support/errors.h"

namespace metile::python {

ir::DType dtype_from_name(const std::string& name) {
  if (std::optional<ir::DType> t = ir::parse_dtype(name)) return *t;
  throw UserError(
      "dtype: unknown dtype '" + name +
      "' (expected f16, bf16, f32, f64, f8e4m3, f8e5m2, i8, u8, i16, u16, i32, u32, i64 or "
      "i1)");
}

}  // namespace metile::python
