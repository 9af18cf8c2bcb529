// MSL math functions for float, half, bfloat and their vectors. 16-bit types compute in
// float and round back. metal::fast and metal::precise name the same CPU
// implementations: the host is the precise reference, never the fast approximation.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "vector_types.h"

namespace metal {
namespace math_impl {

using detail::floating;
using detail::scalar;

template <class T, int N, bool P, class F>
vec<T, N, P> componentwise(const vec<T, N, P>& a, F f) {
  vec<T, N, P> r;
  for (int i = 0; i < N; ++i) r[i] = f(a[i]);
  return r;
}
template <class T, int N, bool P, class F>
vec<T, N, P> componentwise(const vec<T, N, P>& a, const vec<T, N, P>& b, F f) {
  vec<T, N, P> r;
  for (int i = 0; i < N; ++i) r[i] = f(a[i], b[i]);
  return r;
}
template <class T, int N, bool P, class F>
vec<T, N, P> componentwise(const vec<T, N, P>& a, const vec<T, N, P>& b, const vec<T, N, P>& c,
                           F f) {
  vec<T, N, P> r;
  for (int i = 0; i < N; ++i) r[i] = f(a[i], b[i], c[i]);
  return r;
}

// The computation type of a floating scalar: float for float and the 16-bit types.
template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// std::fmin and std::fmax are library calls at -O2 (their NaN rule keeps the compiler from
// using minss/maxss); these forms give the same results: a NaN operand yields the other one,
// and of two equal operands (signed zeros) the second. They are out of line, with SIMD clones
// (gnu::simd): inlined, each one's branches made the host compiler's time grow much faster
// than a straight-line kernel of them (2,500 maxima: 434 s; benchmarks/compile_scaling.py),
// while a call costs it the same few times an add's time wherever it is, and a vectorised
// thread loop still calls the vector clone, 4 to 16 lanes at once. The plain float min and max below are such functions
// themselves, not wrappers around them: each inlined wrapper cost GCC's inliner time that grows
// with the size of the function it lands in (4,000 maxima per thread: 2.7 s of "integration").
template <class F>
[[gnu::always_inline]] inline F fmin_rule(F x, F y) {
  return x != x ? y : y != y ? x : x < y ? x : y;
}
template <class F>
[[gnu::always_inline]] inline F fmax_rule(F x, F y) {
  return x != x ? y : y != y ? x : x > y ? x : y;
}
#define METILE_OUT_OF_LINE [[gnu::noinline, gnu::simd("notinbranch")]] inline
METILE_OUT_OF_LINE float fmin_inline(float x, float y) {
  return fmin_rule(x, y);
}
METILE_OUT_OF_LINE float fmax_inline(float x, float y) {
  return fmax_rule(x, y);
}
METILE_OUT_OF_LINE double fmin_inline(double x, double y) {
  return fmin_rule(x, y);
}
METILE_OUT_OF_LINE double fmax_inline(double x, double y) {
  return fmax_rule(x, y);
}

// glibc's expf (since 2.28: 2^(k/32) from a 32-entry table times a cubic in double), written
// out so that a thread loop vectorises it: the same table, coefficients and operations, with
// FMAs exactly where glibc's FMA build has them, so it returns glibc's bits for every float
// (checked exhaustively). It is used only where that build is known to be the one glibc runs:
// x86-64 glibc, compiled for a CPU with FMA and AVX2 (glibc picks its FMA variant on such a
// CPU); elsewhere exp stays the libm call.
#if defined(__GLIBC__) && defined(__x86_64__) && defined(__FMA__) && defined(__AVX2__) && \
    (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 28)
#define METILE_HOST_INLINE_EXPF 1
inline constexpr uint64_t kExp2Table[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
inline float expf_as_glibc(float x) {
  constexpr double inv_ln2_n = 0x1.71547652b82fep+0 * 32, shift = 0x1.8p+52;
  constexpr double c0 = 0x1.c6af84b912394p-5 / 32 / 32 / 32, c1 = 0x1.ebfce50fac4f3p-3 / 32 / 32,
                   c2 = 0x1.62e42ff0c52d6p-1 / 32;
  const double xd = x;
  const double k_shifted = __builtin_fma(inv_ln2_n, xd, shift);  // k = round(x * 32 / ln 2)
  const double r = __builtin_fma(inv_ln2_n, xd, -(k_shifted - shift));
  const uint64_t k = std::bit_cast<uint64_t>(k_shifted);
  const double s = std::bit_cast<double>(kExp2Table[k % 32] + (k << 47));  // 2^(k/32)
  const double y = __builtin_fma(__builtin_fma(c0, r, c1), r * r, __builtin_fma(c2, r, 1.0)) * s;
  // glibc's special cases, as bit selects (a ?: on floats would be a branch that keeps the
  // loop from vectorising): overflow to inf, underflow to 0, a NaN quietened as x + x does.
  const uint32_t e = std::bit_cast<uint32_t>(float(y));
  const uint32_t over = -uint32_t(x > 0x1.62e42ep6f), under = -uint32_t(x < -0x1.9fe368p6f),
                 nan = -uint32_t(x != x);
  const uint32_t finite = ((e & ~over) | (0x7f800000u & over)) & ~under;
  return std::bit_cast<float>((finite & ~nan) | ((std::bit_cast<uint32_t>(x) | 0x400000u) & nan));
}
#endif
inline float exp_of(float x) {
#if defined(METILE_HOST_INLINE_EXPF) && !defined(METILE_HOST_SCALAR_MATH)
  return expf_as_glibc(x);
#else
  return std::exp(x);
#endif
}
inline double exp_of(double x) {
  return std::exp(x);
}

// Each function also has a plain overload for float, which wins overload resolution: GCC's
// time to parse a function grows with the square of its calls of function templates (12,000
// calls of one template in one function: 1.3 s, of a plain function 0.1 s), and a straight-line
// kernel calls one per tile element (benchmarks/compile_scaling.py). A module without a
// work-group function (METILE_HOST_SCALAR_MATH, defined by the host compiler's prefix: its body
// function runs one thread at a time, so nothing vectorises) calls these out of line: each
// inlined call cost GCC time that grows with the size of the function it lands in (its IPA
// inliner's heuristics and "integration"), where a call costs it about as much everywhere.
// exp is then glibc's expf itself, the bits expf_as_glibc gives.
#ifdef METILE_HOST_SCALAR_MATH
#define METILE_FLOAT_CALL [[gnu::noinline]] inline
#else
#define METILE_FLOAT_CALL [[gnu::always_inline]] inline
#endif
#define METILE_FLOAT_OVERLOAD_1(name)     \
  METILE_FLOAT_CALL float name(float x) { \
    return name<float>(x);                \
  }
#define METILE_FLOAT_OVERLOAD_2(name)              \
  METILE_FLOAT_CALL float name(float x, float y) { \
    return name<float>(x, y);                      \
  }

#define METILE_MATH_UNARY(name, expr)                     \
  template <floating T>                                   \
  T name(T value) {                                       \
    const compute_t<T> x = compute_t<T>(value);           \
    return T(expr);                                       \
  }                                                       \
  METILE_FLOAT_OVERLOAD_1(name)                           \
  template <floating T, int N, bool P>                    \
  vec<T, N, P> name(const vec<T, N, P>& v) {              \
    return componentwise(v, [](T e) { return name(e); }); \
  }
METILE_MATH_UNARY(exp, exp_of(x))
METILE_MATH_UNARY(exp2, std::exp2(x))
METILE_MATH_UNARY(exp10, std::pow(compute_t<T>(10), x))
METILE_MATH_UNARY(log, std::log(x))
METILE_MATH_UNARY(log2, std::log2(x))
METILE_MATH_UNARY(log10, std::log10(x))
METILE_MATH_UNARY(sqrt, std::sqrt(x))
METILE_MATH_UNARY(rsqrt, 1 / std::sqrt(x))
METILE_MATH_UNARY(fabs, std::fabs(x))
METILE_MATH_UNARY(sin, std::sin(x))
METILE_MATH_UNARY(cos, std::cos(x))
METILE_MATH_UNARY(tan, std::tan(x))
METILE_MATH_UNARY(asin, std::asin(x))
METILE_MATH_UNARY(acos, std::acos(x))
METILE_MATH_UNARY(atan, std::atan(x))
METILE_MATH_UNARY(sinh, std::sinh(x))
METILE_MATH_UNARY(cosh, std::cosh(x))
METILE_MATH_UNARY(tanh, std::tanh(x))
METILE_MATH_UNARY(floor, std::floor(x))
METILE_MATH_UNARY(ceil, std::ceil(x))
METILE_MATH_UNARY(trunc, std::trunc(x))
METILE_MATH_UNARY(round, std::round(x))
METILE_MATH_UNARY(rint, std::nearbyint(x))
METILE_MATH_UNARY(fract, std::fmin(x - std::floor(x), compute_t<T>(0x1.fffffep-1)))
METILE_MATH_UNARY(sign, (x > 0 ? 1 : x < 0 ? -1 : x))
METILE_MATH_UNARY(saturate, std::fmin(std::fmax(x, compute_t<T>(0)), compute_t<T>(1)))
#undef METILE_MATH_UNARY

// The second operand may be a scalar of the first's type (or converts to it).
#define METILE_MATH_BINARY(name, expr)                                                    \
  template <floating T>                                                                   \
  T name(T first, std::type_identity_t<T> second) {                                       \
    const compute_t<T> x = compute_t<T>(first), y = compute_t<T>(second);                 \
    return T(expr);                                                                       \
  }                                                                                       \
  METILE_FLOAT_OVERLOAD_2(name)                                                           \
  template <floating T, int N, bool P>                                                    \
  vec<T, N, P> name(const vec<T, N, P>& a, const std::type_identity_t<vec<T, N, P>>& b) { \
    return componentwise(a, b, [](T e, T f) { return name(e, f); });                      \
  }
METILE_MATH_BINARY(fmin, fmin_inline(x, y))
METILE_MATH_BINARY(fmax, fmax_inline(x, y))
METILE_MATH_BINARY(fmod, std::fmod(x, y))
METILE_MATH_BINARY(pow, std::pow(x, y))
METILE_MATH_BINARY(powr, std::pow(x, y))
METILE_MATH_BINARY(atan2, std::atan2(x, y))
METILE_MATH_BINARY(copysign, std::copysign(x, y))
METILE_MATH_BINARY(step, (y < x ? 0 : 1))
METILE_MATH_BINARY(divide, x / y)
#undef METILE_MATH_BINARY

template <floating T>
T fma(T a, std::type_identity_t<T> b, std::type_identity_t<T> c) {
  return T(std::fma(compute_t<T>(a), compute_t<T>(b), compute_t<T>(c)));
}
template <floating T, int N, bool P>
vec<T, N, P> fma(const vec<T, N, P>& a, const std::type_identity_t<vec<T, N, P>>& b,
                 const std::type_identity_t<vec<T, N, P>>& c) {
  return componentwise(a, b, c, [](T x, T y, T z) { return fma(x, y, z); });
}
template <class T>
auto mad(const T& a, const std::type_identity_t<T>& b, const std::type_identity_t<T>& c) {
  return fma(a, b, c);
}

// min/max/clamp/abs also take integers. Integer abs is a template so that the C
// library's ::abs(int) wins overload resolution where both are visible.
template <scalar T>
T min(T a, std::type_identity_t<T> b) {
  if constexpr (floating<T>)
    return T(math_impl::fmin_inline(compute_t<T>(a), compute_t<T>(b)));
  else
    return b < a ? b : a;
}
template <scalar T>
T max(T a, std::type_identity_t<T> b) {
  if constexpr (floating<T>)
    return T(math_impl::fmax_inline(compute_t<T>(a), compute_t<T>(b)));
  else
    return a < b ? b : a;
}
METILE_OUT_OF_LINE float min(float x, float y) {
  return fmin_rule(x, y);
}
METILE_OUT_OF_LINE float max(float x, float y) {
  return fmax_rule(x, y);
}
#undef METILE_OUT_OF_LINE
template <scalar T>
T clamp(T x, std::type_identity_t<T> lo, std::type_identity_t<T> hi) {
  return min(max(x, lo), hi);
}
template <scalar T>
T abs(T x) {
  if constexpr (floating<T>)
    return fabs(x);
  else if constexpr (std::is_signed_v<T>)
    return x < 0 ? T(-x) : x;
  else
    return x;
}
template <class T, int N, bool P>
vec<T, N, P> min(const vec<T, N, P>& a, const std::type_identity_t<vec<T, N, P>>& b) {
  return componentwise(a, b, [](T x, T y) { return min(x, y); });
}
template <class T, int N, bool P>
vec<T, N, P> max(const vec<T, N, P>& a, const std::type_identity_t<vec<T, N, P>>& b) {
  return componentwise(a, b, [](T x, T y) { return max(x, y); });
}
template <class T, int N, bool P>
vec<T, N, P> clamp(const vec<T, N, P>& x, const std::type_identity_t<vec<T, N, P>>& lo,
                   const std::type_identity_t<vec<T, N, P>>& hi) {
  return min(max(x, lo), hi);
}
template <class T, int N, bool P>
vec<T, N, P> abs(const vec<T, N, P>& v) {
  return componentwise(v, [](T x) { return abs(x); });
}
template <class T>
auto mix(const T& x, const std::type_identity_t<T>& y, const std::type_identity_t<T>& a) {
  return x + (y - x) * a;
}

// Classification returns bool (a bool vector for vectors).
#define METILE_MATH_PREDICATE(name, expr)          \
  template <floating T>                            \
  bool name(T value) {                             \
    const compute_t<T> x = compute_t<T>(value);    \
    return expr;                                   \
  }                                                \
  template <floating T, int N, bool P>             \
  vec<bool, N> name(const vec<T, N, P>& v) {       \
    vec<bool, N> r;                                \
    for (int i = 0; i < N; ++i) r[i] = name(v[i]); \
    return r;                                      \
  }
METILE_MATH_PREDICATE(isnan, std::isnan(x))
METILE_MATH_PREDICATE(isinf, std::isinf(x))
METILE_MATH_PREDICATE(isfinite, std::isfinite(x))
METILE_MATH_PREDICATE(signbit, std::signbit(x))
#undef METILE_MATH_PREDICATE
#undef METILE_FLOAT_OVERLOAD_1
#undef METILE_FLOAT_OVERLOAD_2
#undef METILE_FLOAT_CALL

// select(a, b, c): c ? b : a, componentwise for a bool-vector condition.
template <scalar T>
T select(T a, std::type_identity_t<T> b, bool c) {
  return c ? b : a;
}
template <class T, int N, bool P>
vec<T, N, P> select(const vec<T, N, P>& a, const std::type_identity_t<vec<T, N, P>>& b,
                    const vec<bool, N>& c) {
  vec<T, N, P> r;
  for (int i = 0; i < N; ++i) r[i] = c[i] ? b[i] : a[i];
  return r;
}
template <class T, int N, bool P>
vec<T, N, P> select(const vec<T, N, P>& a, const std::type_identity_t<vec<T, N, P>>& b, bool c) {
  return c ? b : a;
}

template <class T, int N, bool P>
T dot(const vec<T, N, P>& a, const vec<T, N, P>& b) {
  compute_t<T> sum = 0;
  for (int i = 0; i < N; ++i) sum += compute_t<T>(a[i]) * compute_t<T>(b[i]);
  return T(sum);
}
template <class T, int N, bool P>
T length(const vec<T, N, P>& a) {
  return sqrt(dot(a, a));
}
template <class T, int N, bool P>
vec<T, N, P> normalize(const vec<T, N, P>& a) {
  return a * rsqrt(dot(a, a));
}

}  // namespace math_impl

#define METILE_MATH_FUNCTIONS(X)                                                                 \
  X(exp)                                                                                         \
  X(exp2)                                                                                        \
  X(exp10)                                                                                       \
  X(log)                                                                                         \
  X(log2)                                                                                        \
  X(log10) X(sqrt) X(rsqrt) X(fabs) X(sin) X(cos) X(tan) X(asin) X(acos) X(atan) X(sinh) X(cosh) \
      X(tanh) X(floor) X(ceil) X(trunc) X(round) X(rint) X(fract) X(sign) X(saturate) X(fmin)    \
          X(fmax) X(fmod) X(pow) X(powr) X(atan2) X(copysign) X(step) X(divide) X(fma) X(mad)    \
              X(min) X(max) X(clamp) X(abs) X(mix) X(isnan) X(isinf) X(isfinite) X(signbit)      \
                  X(select) X(dot) X(length) X(normalize)
#define METILE_USING_MATH(name) using math_impl::name;
METILE_MATH_FUNCTIONS(METILE_USING_MATH)
namespace fast {
METILE_MATH_FUNCTIONS(METILE_USING_MATH)
}
namespace precise {
METILE_MATH_FUNCTIONS(METILE_USING_MATH)
}
#undef METILE_USING_MATH
#undef METILE_MATH_FUNCTIONS

}  // namespace metal
