#include "metile/graph/tensor_spec.h"

#include <algorithm>

#include "metile/support/errors.h"

namespace metile::graph {

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
    case DType::i32:
      return "i32";
  }
  throw InternalError("dtype_name: unknown dtype");
}

DType parse_dtype(std::string_view name) {
  for (DType d : {DType::f16, DType::bf16, DType::f32, DType::i32})
    if (dtype_name(d) == name) return d;
  throw UserError("TensorSpec: unknown dtype '" + std::string(name) +
                  "'; expected one of f16, bf16, f32, i32");
}

int dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::f32:
    case DType::i32:
      return 4;
  }
  throw InternalError("dtype_bytes: unknown dtype");
}

bool is_float(DType dtype) {
  return dtype != DType::i32;
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    // Align from the trailing axis; a missing axis acts as size 1.
    int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[out.size() - 1 - i] = std::max(da, db);
  }
  return out;
}

TensorSpec::TensorSpec(Shape shape_in, DType dtype_in)
    : shape(std::move(shape_in)), dtype(dtype_in) {
  for (int64_t d : shape)
    if (d <= 0)
      throw UserError("TensorSpec: shape " + shape_str(shape) + " has a non-positive dimension");
}

TensorSpec::TensorSpec(Shape shape_in, std::string_view dtype_in)
    : TensorSpec(std::move(shape_in), parse_dtype(dtype_in)) {}

int64_t TensorSpec::num_elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorSpec::str() const {
  return shape_str(shape) + " " + std::string(dtype_name(dtype));
}

}  // namespace metile::graph
