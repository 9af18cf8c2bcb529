// simdgroup_matrix<T, 8, 8>: an 8x8 matrix spread over the 32 lanes of a SIMD group, two
// elements per lane. Lane l holds row r and columns c, c+1 of Apple's de-facto mapping
// for lane matrix_lane_map[l] (the identity unless a test permutes it, which proves that
// generated code never depends on the mapping). Loads and stores touch only the lane's
// own elements; multiply-accumulate is a rendezvous that gathers every lane's fragments.
#pragma once

#include "simd.h"

namespace metal {

template <class T, int Cols, int Rows>
struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "the host emulator implements 8x8 simdgroup matrices");
  vec<T, 2> elements;

  simdgroup_matrix() = default;
  // A diagonal matrix (MSL semantics of the one-value constructor).
  explicit simdgroup_matrix(T diagonal);
  vec<T, 2>& thread_elements() { return elements; }
  const vec<T, 2>& thread_elements() const { return elements; }
};

using simdgroup_float8x8 = simdgroup_matrix<float, 8, 8>;
using simdgroup_half8x8 = simdgroup_matrix<half, 8, 8>;
using simdgroup_bfloat8x8 = simdgroup_matrix<bfloat, 8, 8>;

namespace detail {

struct matrix_coord {
  unsigned row, col;  // the lane holds (row, col) and (row, col + 1)
};
// Apple's mapping (as used by MLX's MMA fragments).
inline matrix_coord apple_matrix_coord(unsigned lane) {
  const unsigned quad = lane / 4;
  return {(quad & 4) + (lane / 2) % 4, (quad & 2) * 2 + (lane % 2) * 2};
}
inline matrix_coord matrix_coord_of_lane(unsigned lane) {
  return apple_matrix_coord(host_runtime->matrix_lane_map[lane]);
}
inline matrix_coord my_matrix_coord() {
  return matrix_coord_of_lane(host_runtime->simd_lane());
}

template <class TA, class TB, class TC>
struct mma_fragments {
  vec<TA, 2> a;
  vec<TB, 2> b;
  vec<TC, 2> c;
};

}  // namespace detail

template <class T, int C, int R>
simdgroup_matrix<T, C, R>::simdgroup_matrix(T diagonal) {
  const detail::matrix_coord at = detail::my_matrix_coord();
  for (unsigned i = 0; i < 2; ++i) elements[i] = at.row == at.col + i ? diagonal : T(0);
}

template <class T, int C, int R>
simdgroup_matrix<T, C, R> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, C, R> m;
  m.elements = vec<T, 2>(value);
  return m;
}

template <class T, class U>
void simdgroup_load(simdgroup_matrix<T, 8, 8>& d, const U* src, ulong elements_per_row = 8,
                    ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false) {
  const detail::matrix_coord at = detail::my_matrix_coord();
  for (unsigned i = 0; i < 2; ++i) {
    const ulong r = transpose_matrix ? at.col + i : at.row;
    const ulong c = transpose_matrix ? at.row : at.col + i;
    d.elements[i] = T(src[(matrix_origin.y + r) * elements_per_row + matrix_origin.x + c]);
  }
}

template <class T, class U>
void simdgroup_store(const simdgroup_matrix<T, 8, 8>& a, U* dst, ulong elements_per_row = 8,
                     ulong2 matrix_origin = ulong2(0), bool transpose_matrix = false) {
  const detail::matrix_coord at = detail::my_matrix_coord();
  for (unsigned i = 0; i < 2; ++i) {
    const ulong r = transpose_matrix ? at.col + i : at.row;
    const ulong c = transpose_matrix ? at.row : at.col + i;
    dst[(matrix_origin.y + r) * elements_per_row + matrix_origin.x + c] = U(a.elements[i]);
  }
}

// d = a * b + c, accumulated in float.
template <class TD, class TA, class TB, class TC>
void simdgroup_multiply_accumulate(simdgroup_matrix<TD, 8, 8>& d,
                                   const simdgroup_matrix<TA, 8, 8>& a,
                                   const simdgroup_matrix<TB, 8, 8>& b,
                                   const simdgroup_matrix<TC, 8, 8>& c,
                                   int line = __builtin_LINE()) {
  const detail::mma_fragments<TA, TB, TC> mine{a.elements, b.elements, c.elements};
  detail::simd_operands lanes(mine, "simdgroup_multiply_accumulate", line);
  float ma[8][8], mb[8][8], mc[8][8];
  for (unsigned l = 0; l < METILE_HOST_SIMD_WIDTH; ++l) {
    const auto frag = lanes.at<detail::mma_fragments<TA, TB, TC>>(l);
    const detail::matrix_coord at = detail::matrix_coord_of_lane(l);
    for (unsigned i = 0; i < 2; ++i) {
      ma[at.row][at.col + i] = float(frag.a[i]);
      mb[at.row][at.col + i] = float(frag.b[i]);
      mc[at.row][at.col + i] = float(frag.c[i]);
    }
  }
  const detail::matrix_coord at = detail::matrix_coord_of_lane(lanes.lane());
  for (unsigned i = 0; i < 2; ++i) {
    float sum = mc[at.row][at.col + i];
    for (unsigned k = 0; k < 8; ++k) sum += ma[at.row][k] * mb[k][at.col + i];
    d.elements[i] = TD(sum);
  }
}

template <class TD, class TA, class TB>
void simdgroup_multiply(simdgroup_matrix<TD, 8, 8>& d, const simdgroup_matrix<TA, 8, 8>& a,
                        const simdgroup_matrix<TB, 8, 8>& b, int line = __builtin_LINE()) {
  simdgroup_multiply_accumulate(d, a, b, make_filled_simdgroup_matrix<TD, 8, 8>(TD(0)), line);
}

}  // namespace metal
