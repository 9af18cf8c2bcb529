// The type of a Graph IR value: a shape and an element dtype.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metile::graph {

// Element types a graph tensor may hold; i32 is for masks and indices.
enum class DType : uint8_t { f16, bf16, f32, i32 };

std::string_view dtype_name(DType dtype);  // "f16"
// Throws UserError naming the accepted dtypes on an unknown name.
DType parse_dtype(std::string_view name);
int dtype_bytes(DType dtype);
bool is_float(DType dtype);

using Shape = std::vector<int64_t>;

// Python-style text of a shape: "(1, 2048)", "(2048,)", "()".
std::string shape_str(const Shape& shape);
// Numpy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

struct TensorSpec {
  Shape shape;
  DType dtype = DType::f32;

  TensorSpec() = default;
  // Throws UserError on a non-positive dimension.
  TensorSpec(Shape shape, DType dtype);
  TensorSpec(Shape shape, std::string_view dtype);

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t num_elements() const;
  int64_t bytes() const { return num_elements() * dtype_bytes(dtype); }
  std::string str() const;  // "(1, 2048) f16"
  bool operator==(const TensorSpec&) const = default;
};

}  // namespace metile::graph
