#include "reference.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

namespace metile::reference {

std::string storage_name(Storage s) {
  return s == Storage::f16 ? "f16" : s == Storage::bf16 ? "bf16" : "f32";
}
int storage_bytes(Storage s) {
  return s == Storage::f32 ? 4 : 2;
}

uint16_t float_to_half_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)
    return static_cast<uint16_t>(sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal or zero in half
    // Scale so the half subnormal unit (2^-24) becomes 1, then round to nearest even.
    const float scaled = std::bit_cast<float>(abs) * 16777216.0f;
    const float rounded = std::nearbyint(scaled);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
  }
  uint32_t mantissa = abs & 0x7fffffu;
  uint32_t exponent = (abs >> 23) - 127 + 15;
  uint32_t half = (exponent << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float half_bits_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

uint16_t float_to_bfloat_bits(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bfloat_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

float round_to(Storage s, float f) {
  switch (s) {
    case Storage::f16:
      return half_bits_to_float(float_to_half_bits(f));
    case Storage::bf16:
      return bfloat_bits_to_float(float_to_bfloat_bits(f));
    case Storage::f32:
      return f;
  }
  return f;
}

HostArray::HostArray(Storage storage, size_t count)
    : storage_(storage), count_(count), bytes_(count * storage_bytes(storage)) {}

HostArray::HostArray(Storage storage, const std::vector<float>& values)
    : HostArray(storage, values.size()) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (storage_ == Storage::f32) {
      std::memcpy(&bytes_[i * 4], &values[i], 4);
    } else {
      uint16_t bits = storage_ == Storage::f16 ? float_to_half_bits(values[i])
                                               : float_to_bfloat_bits(values[i]);
      std::memcpy(&bytes_[i * 2], &bits, 2);
    }
  }
}

float HostArray::at(size_t i) const {
  if (storage_ == Storage::f32) {
    float f;
    std::memcpy(&f, &bytes_[i * 4], 4);
    return f;
  }
  uint16_t bits;
  std::memcpy(&bits, &bytes_[i * 2], 2);
  return storage_ == Storage::f16 ? half_bits_to_float(bits) : bfloat_bits_to_float(bits);
}

std::vector<float> HostArray::to_floats() const {
  std::vector<float> r(count_);
  for (size_t i = 0; i < count_; ++i) r[i] = at(i);
  return r;
}

std::vector<float> random_values(size_t n, float lo, float hi, uint32_t seed, Storage s) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& f : v) f = round_to(s, dist(rng));
  return v;
}

std::vector<float> vector_add(const std::vector<float>& x, const std::vector<float>& y) {
  std::vector<float> r(x.size());
  for (size_t i = 0; i < x.size(); ++i) r[i] = static_cast<float>(double(x[i]) + double(y[i]));
  return r;
}

std::vector<float> softmax_rows(const std::vector<float>& x, int rows, int cols, int stride) {
  std::vector<float> y(x.size(), 0.0f);
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[static_cast<size_t>(r) * stride];
    double m = -INFINITY;
    for (int c = 0; c < cols; ++c) m = std::max(m, double(row[c]));
    double s = 0;
    for (int c = 0; c < cols; ++c) s += std::exp(double(row[c]) - m);
    for (int c = 0; c < cols; ++c)
      y[static_cast<size_t>(r) * stride + c] = static_cast<float>(std::exp(double(row[c]) - m) / s);
  }
  return y;
}

std::vector<float> rms_norm_rows(const std::vector<float>& x, const std::vector<float>& w, int rows,
                                 int cols, int stride, float eps) {
  std::vector<float> y(x.size(), 0.0f);
  for (int r = 0; r < rows; ++r) {
    const float* row = &x[static_cast<size_t>(r) * stride];
    double ss = 0;
    for (int c = 0; c < cols; ++c) ss += double(row[c]) * row[c];
    const double inv = 1.0 / std::sqrt(ss / cols + eps);
    for (int c = 0; c < cols; ++c)
      y[static_cast<size_t>(r) * stride + c] = static_cast<float>(row[c] * inv * w[c]);
  }
  return y;
}

std::vector<float> row_sums(const std::vector<float>& x, int rows, int cols, int stride) {
  std::vector<float> y(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    double s = 0;
    for (int c = 0; c < cols; ++c) s += x[static_cast<size_t>(r) * stride + c];
    y[static_cast<size_t>(r)] = static_cast<float>(s);
  }
  return y;
}

double max_abs_error(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) throw std::invalid_argument("max_abs_error: sizes differ");
  double e = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(double(a[i]) - double(b[i]));
    if (std::isnan(d)) return INFINITY;
    e = std::max(e, d);
  }
  return e;
}

}  // namespace metile::reference
