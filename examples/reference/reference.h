// Plain C++ references for the demo and the end-to-end tests. Independent of the
// compiler: no meTile code, only float/double arithmetic and explicit storage rounding.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace metile::reference {

enum class Storage { f16, bf16, f32 };
std::string storage_name(Storage s);
int storage_bytes(Storage s);

// IEEE binary16 / bfloat16 conversions with round-to-nearest-even.
uint16_t float_to_half_bits(float f);
float half_bits_to_float(uint16_t h);
uint16_t float_to_bfloat_bits(float f);
float bfloat_bits_to_float(uint16_t b);

// Values in a storage format, kept as raw bytes the kernel reads and writes.
class HostArray {
 public:
  HostArray(Storage storage, const std::vector<float>& values);
  HostArray(Storage storage, size_t count);  // zero-filled

  Storage storage() const { return storage_; }
  size_t size() const { return count_; }
  void* data() { return bytes_.data(); }
  int64_t byte_size() const { return static_cast<int64_t>(bytes_.size()); }
  float at(size_t i) const;
  std::vector<float> to_floats() const;

 private:
  Storage storage_;
  size_t count_;
  std::vector<uint8_t> bytes_;
};

// Rounds a float to what the storage format holds.
float round_to(Storage s, float f);

// Deterministic pseudo-random values in [lo, hi), already rounded to the storage format.
std::vector<float> random_values(size_t n, float lo, float hi, uint32_t seed, Storage s);

// The reference computations, on values already in float (computed in double).
std::vector<float> vector_add(const std::vector<float>& x, const std::vector<float>& y);
std::vector<float> softmax_rows(const std::vector<float>& x, int rows, int cols, int stride);
std::vector<float> rms_norm_rows(const std::vector<float>& x, const std::vector<float>& w, int rows,
                                 int cols, int stride, float eps);
std::vector<float> row_sums(const std::vector<float>& x, int rows, int cols, int stride);

// Largest |a - b| over the first n elements.
double max_abs_error(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace metile::reference
