// Value types shared by Tile IR and Metal IR.
//
//   f32                      scalar
//   ptr<f32>                 pointer to device memory; ptr<f32, threadgroup> to threadgroup memory
//   tile<256xf32>            1-D tile (Tile IR only); tile<16x64xf32> 2-D; tile<256xptr<f32>>
//   vec<4xf32>               short vector held by one thread (Metal IR only)
//   desc<2xf32>              tensor descriptor of rank 2 (Tile IR only)
//   matrix<8x8xf32>          an 8x8 matrix fragment held by one SIMD group; which lane holds
//                            which element is opaque (docs/fragments.md); f16, bf16, f32, i1.
//                            Metal IR on targets with mma.sync also has its native shapes:
//                            matrix<16x16xf16> (an A operand), matrix<16x8xf16> (a B
//                            operand, [K, N]) and matrix<16x8xf32> (an accumulator)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metile::ir {

// Newer dtypes come last so the values of the older ones (cache keys, tables) stay as they
// were. f8e4m3 is OCP e4m3fn (Triton's float8e4nv: no infinities, NaN = S.1111.111, max 448),
// f8e5m2 is IEEE-like e5m2 (Triton's float8e5); both are held as their byte and only move,
// convert and select: arithmetic on them is done in a wider float (docs/python.md, "8-bit floats").
enum class DType : uint8_t {
  f16,
  bf16,
  f32,
  i32,
  u32,
  i64,
  i1,
  i8,
  u8,
  i16,
  u16,
  f64,
  f8e4m3,
  f8e5m2
};
inline constexpr int kDTypeCount = 14;

std::string_view dtype_name(DType t);  // "f32"
std::optional<DType> parse_dtype(std::string_view name);
int dtype_bytes(DType t);  // i1 counts as 1
bool is_float(DType t);    // f16, bf16, f32, f64 and the fp8s
bool is_fp8(DType t);      // f8e4m3, f8e5m2
bool is_integer(DType t);  // i8, u8, i16, u16, i32, u32, i64 (not i1)
bool is_signed(DType t);
// The values an integer or i1 constant of dtype t may hold (i64: all of int64_t).
struct IntegerRange {
  int64_t min, max;
  bool contains(int64_t v) const { return min <= v && v <= max; }
};
IntegerRange integer_range(DType t);  // InternalError for a float dtype

enum class TypeKind : uint8_t { Scalar, Tile, Vector, TensorDesc, Matrix };
enum class AddressSpace : uint8_t { Device, Threadgroup };

struct Type {
  TypeKind kind = TypeKind::Scalar;
  DType dtype = DType::f32;  // element type; for pointers, the pointee
  bool pointer = false;      // the element is a pointer to dtype
  AddressSpace space = AddressSpace::Device;
  std::vector<int64_t> shape;  // Tile: 1 or 2 dims; Vector: {width}; TensorDesc: {rank}

  static Type scalar(DType t) { return {TypeKind::Scalar, t, false, AddressSpace::Device, {}}; }
  static Type ptr(DType t, AddressSpace s = AddressSpace::Device) {
    return {TypeKind::Scalar, t, true, s, {}};
  }
  static Type tile(DType t, std::vector<int64_t> shape) {
    return {TypeKind::Tile, t, false, AddressSpace::Device, std::move(shape)};
  }
  static Type ptr_tile(DType t, std::vector<int64_t> shape, AddressSpace s = AddressSpace::Device) {
    return {TypeKind::Tile, t, true, s, std::move(shape)};
  }
  // One-element shapes are built as (count, value), not from an initializer list: GCC 13
  // reports a false -Warray-bounds when a vector made from a one-element list is copied.
  static Type vector(DType t, int64_t width) {
    return {TypeKind::Vector, t, false, AddressSpace::Device, std::vector<int64_t>(1, width)};
  }
  static Type desc(DType t, int64_t rank) {
    return {TypeKind::TensorDesc, t, false, AddressSpace::Device, std::vector<int64_t>(1, rank)};
  }
  // A fragment: 8x8 (simdgroup_matrix on Metal) unless the shape is given.
  static Type matrix(DType t, int64_t rows = 8, int64_t columns = 8) {
    return {TypeKind::Matrix, t, false, AddressSpace::Device, {rows, columns}};
  }

  bool is_scalar() const { return kind == TypeKind::Scalar && !pointer; }
  bool is_pointer() const { return kind == TypeKind::Scalar && pointer; }
  bool is_tile() const { return kind == TypeKind::Tile; }
  bool is_vector() const { return kind == TypeKind::Vector; }
  bool is_desc() const { return kind == TypeKind::TensorDesc; }
  bool is_matrix() const { return kind == TypeKind::Matrix; }
  // Number of logical elements (1 for scalars and pointers, 64 for an 8x8 matrix).
  int64_t num_elements() const;
  // The same shape with another element dtype (pointer-ness dropped).
  Type with_dtype(DType t) const;
  // The element type: scalar or pointer.
  Type element() const;

  std::string str() const;
  bool operator==(const Type&) const = default;
};

// Parses the text form above; nullopt on a malformed type.
std::optional<Type> parse_type(std::string_view text);

}  // namespace metile::ir
