// Values of the C++ eDSL: handles on Tile IR SSA values of the kernel being traced, and
// the operators that build Tile IR from ordinary C++ expressions.
//
//   auto offs = program_id(0) * BLOCK + arange(0, BLOCK);   // i32 tile
//   auto y = x * 2.0f + 1;                                   // numbers adopt x's dtype
//
// Every operator records the user's source line (std::source_location), so a broken rule
// is reported at the line that broke it.
#pragma once

#include <concepts>
#include <cstdint>
#include <source_location>
#include <vector>

#include "metile/ir/builder.h"

namespace metile::dsl {

using Here = std::source_location;
using ir::DType;

inline constexpr DType f16 = DType::f16;
inline constexpr DType bf16 = DType::bf16;
inline constexpr DType f32 = DType::f32;
inline constexpr DType i32 = DType::i32;
inline constexpr DType u32 = DType::u32;
inline constexpr DType i64 = DType::i64;
inline constexpr DType i1 = DType::i1;
inline constexpr DType i8 = DType::i8;
inline constexpr DType u8 = DType::u8;
inline constexpr DType i16 = DType::i16;
inline constexpr DType u16 = DType::u16;
inline constexpr DType f64 = DType::f64;
inline constexpr DType f8e4m3 = DType::f8e4m3;
inline constexpr DType f8e5m2 = DType::f8e5m2;

class Operand;

// A scalar, tile, pointer or tensor descriptor of the kernel being traced. A
// default-constructed Value is empty and means "none" (e.g. `load(p, {}, 0.0f)`).
class Value {
 public:
  Value() = default;

  bool valid() const { return id_ != ir::kNoValue; }
  ir::ValueId id() const { return id_; }
  // The trace this value belongs to (values cannot cross traces).
  uint32_t trace_serial() const { return trace_; }

  const ir::Type& type() const;
  DType dtype() const { return type().dtype; }
  // The tile shape; empty for scalars and pointers.
  std::vector<int64_t> shape() const;
  bool is_tile() const { return type().is_tile(); }
  bool is_scalar() const { return type().is_scalar(); }
  bool is_pointer() const { return type().pointer; }

  // The value converted to another dtype (cast).
  Value to(DType dtype, Here here = Here::current()) const;
  // 2-D sugar: col() is t[:, None], row() is t[None, :].
  Value col(Here here = Here::current()) const;
  Value row(Here here = Here::current()) const;

  Value& operator+=(const Operand& rhs);
  Value& operator-=(const Operand& rhs);
  Value& operator*=(const Operand& rhs);
  Value& operator/=(const Operand& rhs);

  // Used by the DSL internals to hand out new values.
  static Value from_id(ir::ValueId id, uint32_t trace) { return Value(id, trace); }

 private:
  Value(ir::ValueId id, uint32_t trace) : id_(id), trace_(trace) {}
  ir::ValueId id_ = ir::kNoValue;
  uint32_t trace_ = 0;
};

// Aliases that document intent in signatures; all are Values.
using Tile = Value;
using Scalar = Value;
using Ptr = Value;

// One operand of a DSL operation: a Value or a C++ number, with the source line of the
// expression it appears in. A number becomes a constant of the other operand's dtype
// (see DESIGN "Python API": the C++ rules match the Python tracer's for literals).
class Operand {
 public:
  Operand() = default;  // absent
  Operand(const Value& v, Here here = Here::current()) : kind_(Kind::Val), value_(v), here_(here) {}
  template <std::integral T>
  Operand(T n, Here here = Here::current())
      : kind_(std::same_as<T, bool> ? Kind::Bool : Kind::Int),
        int_(static_cast<int64_t>(n)),
        here_(here) {}
  template <std::floating_point T>
  Operand(T n, Here here = Here::current()) : kind_(Kind::Float), float_(n), here_(here) {}

  bool present() const { return kind_ != Kind::Absent; }
  bool is_value() const { return kind_ == Kind::Val; }
  bool is_number() const {
    return kind_ == Kind::Int || kind_ == Kind::Float || kind_ == Kind::Bool;
  }
  bool is_float_number() const { return kind_ == Kind::Float; }
  bool is_bool_number() const { return kind_ == Kind::Bool; }
  const Value& value() const { return value_; }
  int64_t int_number() const { return int_; }
  double float_number() const { return kind_ == Kind::Float ? float_ : static_cast<double>(int_); }
  const Here& where() const { return here_; }

 private:
  enum class Kind : uint8_t { Absent, Val, Int, Float, Bool };
  Kind kind_ = Kind::Absent;
  Value value_;
  int64_t int_ = 0;
  double float_ = 0;
  Here here_;
};

// Arithmetic: + - * / % on numbers; `pointer + offsets` and `pointer - offsets` offset a
// pointer by elements. Both operands must share a dtype (cast first).
Value operator+(const Operand& a, const Operand& b);
Value operator-(const Operand& a, const Operand& b);
Value operator*(const Operand& a, const Operand& b);
Value operator/(const Operand& a, const Operand& b);
Value operator%(const Operand& a, const Operand& b);
Value operator-(const Operand& a);

// Comparisons give i1 values of the broadcast shape.
Value operator<(const Operand& a, const Operand& b);
Value operator<=(const Operand& a, const Operand& b);
Value operator>(const Operand& a, const Operand& b);
Value operator>=(const Operand& a, const Operand& b);
Value operator==(const Operand& a, const Operand& b);
Value operator!=(const Operand& a, const Operand& b);

// Bitwise operations on integers and i1 (shifts on integers only).
Value operator&(const Operand& a, const Operand& b);
Value operator|(const Operand& a, const Operand& b);
Value operator^(const Operand& a, const Operand& b);
Value operator<<(const Operand& a, const Operand& b);
Value operator>>(const Operand& a, const Operand& b);
Value operator~(const Operand& a);  // all bits flipped; logical not for i1

}  // namespace metile::dsl
