// MSL scalar types on the CPU: the integer aliases, and half / bfloat as 16-bit storage
// whose arithmetic is done in float and rounded back (round to nearest even), which is
// exactly what a correctly rounded 16-bit operation gives for + - * /.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "half_bfloat.h"

namespace metal {

using uchar = unsigned char;
using ushort = unsigned short;
using uint = unsigned int;
using ulong = unsigned long;
static_assert(sizeof(long) == 8, "MSL long is 64-bit");

namespace detail {

// The storage formats of half and bfloat; the rounding lives in metile/support so that the
// runtime converts scalar arguments exactly as kernels do.
struct binary16_format {
  static uint16_t from_float(float f) { return metile::float_to_half_bits(f); }
  static float to_float(uint16_t h) { return metile::half_bits_to_float(h); }
};

struct bfloat16_format {
  static uint16_t from_float(float f) { return metile::float_to_bfloat_bits(f); }
  static float to_float(uint16_t b) { return metile::bfloat_bits_to_float(b); }
};

template <class Format>
struct small_float {
  uint16_t bits;

  small_float() = default;
  template <class T>
  requires std::is_arithmetic_v<T>
  constexpr small_float(T v) : bits(Format::from_float(static_cast<float>(v))) {}
  template <class F>
  requires(!std::is_same_v<F, Format>) explicit small_float(small_float<F> v)
      : small_float(float(v)) {}

  operator float() const { return Format::to_float(bits); }

  static small_float from_bits(uint16_t b) {
    small_float r;
    r.bits = b;
    return r;
  }
  small_float operator-() const { return from_bits(uint16_t(bits ^ 0x8000u)); }
  small_float operator+() const { return *this; }
  small_float& operator++() { return *this = float(*this) + 1.0f; }
  small_float& operator--() { return *this = float(*this) - 1.0f; }
  small_float operator++(int) {
    small_float old = *this;
    ++*this;
    return old;
  }
  small_float operator--(int) {
    small_float old = *this;
    --*this;
    return old;
  }
  template <class T>
  small_float& operator+=(T v) {
    return *this = *this + v;
  }
  template <class T>
  small_float& operator-=(T v) {
    return *this = *this - v;
  }
  template <class T>
  small_float& operator*=(T v) {
    return *this = *this * v;
  }
  template <class T>
  small_float& operator/=(T v) {
    return *this = *this / v;
  }
};

template <class T>
struct is_small_float : std::false_type {};
template <class F>
struct is_small_float<small_float<F>> : std::true_type {};

// Usual arithmetic conversions with 16-bit floats: an integer operand converts to the
// 16-bit type, a float (or double) operand wins, two different 16-bit types meet in float.
template <class F>
small_float<F> promote(small_float<F> a, small_float<F>) {
  return a;
}
template <class F, class G>
requires(!std::is_same_v<F, G>) float promote(small_float<F>, small_float<G>) {
  return 0.0f;
}
template <class F, class T>
requires std::is_integral_v<T> small_float<F> promote(small_float<F>, T) {
  return {};
}
template <class F, class T>
requires std::is_integral_v<T> small_float<F> promote(T, small_float<F>) {
  return {};
}
template <class F, class T>
requires std::is_floating_point_v<T> T promote(small_float<F>, T) {
  return {};
}
template <class F, class T>
requires std::is_floating_point_v<T> T promote(T, small_float<F>) {
  return {};
}

template <class A, class B>
concept mixes_small_float = (is_small_float<A>::value &&
                             (is_small_float<B>::value || std::is_arithmetic_v<B>)) ||
                            (is_small_float<B>::value && std::is_arithmetic_v<A>);

template <class A, class B>
using small_float_result_t = decltype(promote(std::declval<A>(), std::declval<B>()));

#define METILE_SMALL_FLOAT_BINARY_OP(op)                                          \
  template <class A, class B>                                                     \
  requires mixes_small_float<A, B> small_float_result_t<A, B>                     \
  operator op(A a, B b) {                                                         \
    using R = small_float_result_t<A, B>;                                         \
    using Compute = std::conditional_t<std::is_same_v<R, double>, double, float>; \
    return R(Compute(a) op Compute(b));                                           \
  }
METILE_SMALL_FLOAT_BINARY_OP(+)
METILE_SMALL_FLOAT_BINARY_OP(-)
METILE_SMALL_FLOAT_BINARY_OP(*)
METILE_SMALL_FLOAT_BINARY_OP(/)
#undef METILE_SMALL_FLOAT_BINARY_OP

#define METILE_SMALL_FLOAT_COMPARISON(op)                                         \
  template <class A, class B>                                                     \
  requires mixes_small_float<A, B>                                                \
  bool operator op(A a, B b) {                                                    \
    using R = small_float_result_t<A, B>;                                         \
    using Compute = std::conditional_t<std::is_same_v<R, double>, double, float>; \
    return Compute(a) op Compute(b);                                              \
  }
METILE_SMALL_FLOAT_COMPARISON(==)
METILE_SMALL_FLOAT_COMPARISON(!=)
METILE_SMALL_FLOAT_COMPARISON(<)
METILE_SMALL_FLOAT_COMPARISON(<=)
METILE_SMALL_FLOAT_COMPARISON(>)
METILE_SMALL_FLOAT_COMPARISON(>=)
#undef METILE_SMALL_FLOAT_COMPARISON

// Scalars MSL code computes with, and the floating ones among them.
template <class T>
concept scalar = std::is_arithmetic_v<T> || is_small_float<T>::value;
template <class T>
concept floating = std::is_floating_point_v<T> || is_small_float<T>::value;

}  // namespace detail

using half = detail::small_float<detail::binary16_format>;
using bfloat = detail::small_float<detail::bfloat16_format>;
using bfloat16_t = bfloat;

// Reinterprets the bits of a value of the same size.
template <class To, class From>
To as_type(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "as_type needs types of the same size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

template <class T>
struct numeric_limits : std::numeric_limits<T> {};
template <class F>
struct numeric_limits<detail::small_float<F>> {
  using T = detail::small_float<F>;
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static T max() {
    return T::from_bits(std::is_same_v<F, detail::binary16_format> ? 0x7bff : 0x7f7f);
  }
  static T lowest() { return -max(); }
  static T min() {
    return T::from_bits(std::is_same_v<F, detail::binary16_format> ? 0x0400 : 0x0080);
  }
  static T epsilon() {
    return T::from_bits(std::is_same_v<F, detail::binary16_format> ? 0x1400 : 0x3c00);
  }
  static T infinity() {
    return T::from_bits(std::is_same_v<F, detail::binary16_format> ? 0x7c00 : 0x7f80);
  }
  static T quiet_NaN() {
    return T::from_bits(std::is_same_v<F, detail::binary16_format> ? 0x7e00 : 0x7fc0);
  }
};

}  // namespace metal

#ifndef MAXFLOAT
#define MAXFLOAT 0x1.fffffep+127f
#endif
#define HALF_MAX 65504.0f
#define HALF_MIN 6.103515625e-05f
#define HALF_EPSILON 9.765625e-04f
#define M_E_F 2.71828182845904523536f
#define M_LOG2E_F 1.44269504088896340736f
#define M_LOG10E_F 0.434294481903251827651f
#define M_LN2_F 0.693147180559945309417f
#define M_LN10_F 2.30258509299404568402f
#define M_PI_F 3.14159265358979323846f
#define M_PI_2_F 1.57079632679489661923f
#define M_PI_4_F 0.785398163397448309616f
#define M_1_PI_F 0.318309886183790671538f
#define M_2_PI_F 0.636619772367581343076f
#define M_2_SQRTPI_F 1.12837916709551257390f
#define M_SQRT2_F 1.41421356237309504880f
#define M_SQRT1_2_F 0.707106781186547524401f
