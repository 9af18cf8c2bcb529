// The two 8-bit float formats (Triton's float8e4nv and float8e5) as bytes: the one
// conversion every target computes, written once in C++ for constant folding and literals.
//
// Encoding rounds to nearest even and saturates, as PTX's cvt.rn.satfinite.{e4m3,e5m2}x2.f32
// (what Triton emits on sm_90): a finite value or an infinity beyond the largest finite value
// becomes that value with its sign (448 for e4m3, 57344 for e5m2); NaN becomes the canonical
// NaN byte 0x7F. Decoding is exact.
#pragma once

#include <cstdint>

#include "metile/ir/types.h"

namespace metile::ir {

// The format's parameters; `t` must be f8e4m3 or f8e5m2.
struct Float8Format {
  int mantissa_bits;      // 3 (e4m3) or 2 (e5m2)
  int bias;               // 7 or 15
  uint32_t max_f32_bits;  // the largest finite value, as f32 bits (448, 57344)
  uint8_t max_byte;       // its byte, unsigned (0x7E, 0x7B)
  bool has_infinity;      // e5m2 has; e4m3 (fn: "finite") has not
};
Float8Format float8_format(DType t);

uint8_t float8_encode(DType t, float x);
float float8_decode(DType t, uint8_t byte);

}  // namespace metile::ir
