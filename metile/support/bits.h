// Power-of-two arithmetic shared by the verifiers, the ownership algebra and lowering.
#pragma once

#include <cstdint>

namespace metile {

inline bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

// The exponent of a power of two n (for any n > 0: the smallest k with 2^k >= n).
inline int log2_exact(int64_t n) {
  int bits = 0;
  while ((int64_t{1} << bits) < n) ++bits;
  return bits;
}

}  // namespace metile
