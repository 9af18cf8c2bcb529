// MSL vector types: vec<T, N> with .x/.y/.z/.w, componentwise operators, and the
// constructors MSL allows (broadcast, component lists mixing scalars and vectors,
// explicit element conversion). Sizes and alignments follow MSL: a 3-vector occupies
// four elements; packed_ vectors are tightly packed with the element's alignment.
// Swizzles (.xy, .zw, ...) are not provided.
#pragma once

#include "scalar_types.h"

namespace metal {

template <class T, int N, bool Packed = false>
struct vec;

namespace detail {

template <class T, int N, bool Packed>
constexpr std::size_t vec_alignment = Packed ? alignof(T) : sizeof(T) * (N == 3 ? 4 : N);

template <class T, int N, bool Packed>
struct vec_fields;
template <class T, bool Packed>
struct alignas(vec_alignment<T, 2, Packed>) vec_fields<T, 2, Packed> {
  T x, y;
};
template <class T, bool Packed>
struct alignas(vec_alignment<T, 3, Packed>) vec_fields<T, 3, Packed> {
  T x, y, z;
};
template <class T, bool Packed>
struct alignas(vec_alignment<T, 4, Packed>) vec_fields<T, 4, Packed> {
  T x, y, z, w;
};

template <class T>
struct is_vec : std::false_type {};
template <class T, int N, bool P>
struct is_vec<vec<T, N, P>> : std::true_type {};

template <class T>
constexpr int component_count = 1;
template <class T, int N, bool P>
constexpr int component_count<vec<T, N, P>> = N;

}  // namespace detail

template <class T, int N, bool Packed>
struct vec : detail::vec_fields<T, N, Packed> {
  static_assert(N >= 2 && N <= 4, "MSL vectors have 2, 3 or 4 components");
  using value_type = T;
  static constexpr int size = N;

  vec() = default;
  // Broadcast: float4(0.0f), and the implicit scalar operand of vector arithmetic.
  template <class U>
  requires detail::scalar<U>
  constexpr vec(U s) {
    for (int i = 0; i < N; ++i) (*this)[i] = T(s);
  }
  // Component lists: float4(a, b, c, d), float4(float2(...), z, w), float4(float3(...), w).
  template <class... A>
  requires(sizeof...(A) >= 2 &&
           (detail::component_count<A> + ...) == N) constexpr vec(const A&... parts) {
    int i = 0;
    (append(i, parts), ...);
  }
  // Element conversion: float4(int4(...)).
  template <class U, bool Q>
  requires(!std::is_same_v<U, T>) explicit constexpr vec(const vec<U, N, Q>& other) {
    for (int i = 0; i < N; ++i) (*this)[i] = T(other[i]);
  }
  // packed <-> unpacked of the same element type.
  template <bool Q>
  requires(Q != Packed) constexpr vec(const vec<T, N, Q>& other) {
    for (int i = 0; i < N; ++i) (*this)[i] = other[i];
  }

  constexpr T& operator[](int i) {
    if constexpr (N == 2)
      return i == 0 ? this->x : this->y;
    else if constexpr (N == 3)
      return i == 0 ? this->x : i == 1 ? this->y : this->z;
    else
      return i == 0 ? this->x : i == 1 ? this->y : i == 2 ? this->z : this->w;
  }
  constexpr const T& operator[](int i) const { return const_cast<vec&>(*this)[i]; }

#define METILE_VEC_BINARY_OP(op)                                 \
  friend constexpr vec operator op(const vec& a, const vec& b) { \
    vec r;                                                       \
    for (int i = 0; i < N; ++i) r[i] = T(a[i] op b[i]);          \
    return r;                                                    \
  }                                                              \
  constexpr vec& operator op##=(const vec& b) {                  \
    return *this = *this op b;                                   \
  }
  METILE_VEC_BINARY_OP(+)
  METILE_VEC_BINARY_OP(-)
  METILE_VEC_BINARY_OP(*)
  METILE_VEC_BINARY_OP(/)
  METILE_VEC_BINARY_OP(%)
  METILE_VEC_BINARY_OP(&)
  METILE_VEC_BINARY_OP(|)
  METILE_VEC_BINARY_OP(^)
  METILE_VEC_BINARY_OP(<<)
  METILE_VEC_BINARY_OP(>>)
#undef METILE_VEC_BINARY_OP

#define METILE_VEC_COMPARISON(op)                                         \
  friend constexpr vec<bool, N> operator op(const vec& a, const vec& b) { \
    vec<bool, N> r;                                                       \
    for (int i = 0; i < N; ++i) r[i] = a[i] op b[i];                      \
    return r;                                                             \
  }
  METILE_VEC_COMPARISON(==)
  METILE_VEC_COMPARISON(!=)
  METILE_VEC_COMPARISON(<)
  METILE_VEC_COMPARISON(<=)
  METILE_VEC_COMPARISON(>)
  METILE_VEC_COMPARISON(>=)
  METILE_VEC_COMPARISON(&&)
  METILE_VEC_COMPARISON(||)
#undef METILE_VEC_COMPARISON

  friend constexpr vec operator-(const vec& a) {
    vec r;
    for (int i = 0; i < N; ++i) r[i] = T(-a[i]);
    return r;
  }
  friend constexpr vec operator+(const vec& a) {
    return a;
  }
  friend constexpr vec operator~(const vec& a) {
    vec r;
    for (int i = 0; i < N; ++i) r[i] = T(~a[i]);
    return r;
  }
  friend constexpr vec<bool, N> operator!(const vec& a) {
    vec<bool, N> r;
    for (int i = 0; i < N; ++i) r[i] = !a[i];
    return r;
  }

 private:
  template <class U>
  constexpr void append(int& i, const U& part) {
    if constexpr (detail::is_vec<U>::value) {
      for (int j = 0; j < U::size; ++j) (*this)[i++] = T(part[j]);
    } else {
      (*this)[i++] = T(part);
    }
  }
};

template <int N, bool P>
constexpr bool all(const vec<bool, N, P>& v) {
  for (int i = 0; i < N; ++i)
    if (!v[i]) return false;
  return true;
}
template <int N, bool P>
constexpr bool any(const vec<bool, N, P>& v) {
  for (int i = 0; i < N; ++i)
    if (v[i]) return true;
  return false;
}
constexpr bool all(bool b) {
  return b;
}
constexpr bool any(bool b) {
  return b;
}

#define METILE_VECTOR_ALIASES(T, name)      \
  using name##2 = vec<T, 2>;                \
  using name##3 = vec<T, 3>;                \
  using name##4 = vec<T, 4>;                \
  using packed_##name##2 = vec<T, 2, true>; \
  using packed_##name##3 = vec<T, 3, true>; \
  using packed_##name##4 = vec<T, 4, true>;
METILE_VECTOR_ALIASES(bool, bool)
METILE_VECTOR_ALIASES(char, char)
METILE_VECTOR_ALIASES(uchar, uchar)
METILE_VECTOR_ALIASES(short, short)
METILE_VECTOR_ALIASES(ushort, ushort)
METILE_VECTOR_ALIASES(int, int)
METILE_VECTOR_ALIASES(uint, uint)
METILE_VECTOR_ALIASES(long, long)
METILE_VECTOR_ALIASES(ulong, ulong)
METILE_VECTOR_ALIASES(half, half)
METILE_VECTOR_ALIASES(bfloat, bfloat)
METILE_VECTOR_ALIASES(float, float)
#undef METILE_VECTOR_ALIASES

static_assert(sizeof(float3) == 16 && alignof(float4) == 16 && sizeof(packed_float3) == 12);
static_assert(sizeof(half4) == 8 && sizeof(half3) == 8);

}  // namespace metal
