// Metal IR matrix fragments, emitted as MSL and run on the host emulator under Apple's lane
// map and under permuted ones: the results match a plain C++ reference whichever lane holds
// which element, in every storage dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "metile/codegen/emit.h"
#include "metile/ir/parser.h"
#include "metile/runtime/devices.h"
#include "metile/runtime/host/runtime_table.h"
#include "metile/support/half_bfloat.h"

namespace metile::runtime::testing {
namespace {

using ir::DType;

// out[0..64) = max(A @ B, 0) @ B^T, computed in f32 with the middle product stored as T;
// out[64..128) = (A @ B)^T + exp(A @ B - A @ B) (a transposed store and unary math);
// A and B are row-major 8x8 matrices of dtype T, B also read transposed with stride 8.
std::string two_products_ir(const std::string& T) {
  const std::string m = "matrix<8x8x" + T + ">";
  return "metal.kernel @two_products(%a: ptr<" + T + "> {access = \"read\"}, %b: ptr<" + T +
         "> {access = \"read\"}, %out: ptr<f32> {access = \"write\"})\n"
         "    attributes {threadgroup_bytes = 0, threads_per_threadgroup = 32} {\n"
         "  %zero = constant {value = 0} : i32\n"
         "  %eight = constant {value = 8} : i32\n"
         "  %sixty_four = constant {value = 64} : i32\n"
         "  %f_zero = constant {value = 0.0} : f32\n"
         "  %x = matrix_load %a, %zero, %eight : " +
         m +
         "\n"
         "  %y = matrix_load %b, %zero, %eight : " +
         m +
         "\n"
         "  %y_t = matrix_load %b, %zero, %eight {transpose = 1} : " +
         m +
         "\n"
         "  %acc = matrix_fill %f_zero : matrix<8x8xf32>\n"
         "  %first = matrix_mma %x, %y, %acc : matrix<8x8xf32>\n"
         "  %positive = cmp %first, %acc {pred = \"gt\"} : matrix<8x8xi1>\n"
         "  %relu = select %positive, %first, %acc : matrix<8x8xf32>\n"
         "  %narrow = cast %relu : " +
         m +
         "\n"
         "  %second = matrix_mma %narrow, %y_t, %acc : matrix<8x8xf32>\n"
         "  matrix_store %second, %out, %zero, %eight\n"
         "  %diff = sub %first, %first : matrix<8x8xf32>\n"
         "  %one = exp %diff : matrix<8x8xf32>\n"
         "  %shifted = add %first, %one : matrix<8x8xf32>\n"
         "  matrix_store %shifted, %out, %sixty_four, %eight {transpose = 1}\n"
         "}\n";
}

// Values of -1, -0.5, 0, 0.5, 1: every product and sum below is exact in f16, bf16 and f32.
std::vector<float> small_values(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-2, 2);
  std::vector<float> v(64);
  for (float& x : v) x = 0.5f * float(dist(rng));
  return v;
}

Buffer buffer_of(DType t, const std::vector<float>& values) {
  Buffer buf = get_device("host").allocate(t, {int64_t(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == DType::f32) buf.data_as<float>()[i] = values[i];
    if (t == DType::f16) buf.data_as<uint16_t>()[i] = float_to_half_bits(values[i]);
    if (t == DType::bf16) buf.data_as<uint16_t>()[i] = float_to_bfloat_bits(values[i]);
  }
  return buf;
}

std::vector<float> reference(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> first(64), out(128);
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) {
      float s = 0;
      for (int k = 0; k < 8; ++k) s += a[r * 8 + k] * b[k * 8 + c];
      first[r * 8 + c] = s;
    }
  for (int r = 0; r < 8; ++r)
    for (int c = 0; c < 8; ++c) {
      float s = 0;
      for (int k = 0; k < 8; ++k) s += std::max(first[r * 8 + k], 0.0f) * b[c * 8 + k];
      out[r * 8 + c] = s;
      out[64 + c * 8 + r] = first[r * 8 + c] + 1.0f;
    }
  return out;
}

class MatrixFragments : public ::testing::TestWithParam<DType> {
 protected:
  void TearDown() override {
    std::array<unsigned char, 32> identity;
    std::iota(identity.begin(), identity.end(), 0);
    host::set_simdgroup_matrix_lane_map(identity);
  }
};

TEST_P(MatrixFragments, TwoProductsAreIndependentOfTheLaneMap) {
  const DType t = GetParam();
  const codegen::EmittedKernel emitted = codegen::emit(
      ir::parse(two_products_ir(std::string(ir::dtype_name(t)))), target::default_target());
  Device& device = get_device("host");
  const auto module = device.compile(emitted.source, emitted.abi);
  const std::vector<float> av = small_values(1), bv = small_values(2);
  const std::vector<float> expected = reference(av, bv);
  Buffer a = buffer_of(t, av), b = buffer_of(t, bv);

  std::array<unsigned char, 32> identity, reversed, shuffled;
  std::iota(identity.begin(), identity.end(), 0);
  std::reverse_copy(identity.begin(), identity.end(), reversed.begin());
  shuffled = identity;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
  for (const auto& map : {identity, reversed, shuffled}) {
    host::set_simdgroup_matrix_lane_map(map);
    Buffer out = device.allocate(DType::f32, {128});
    const KernelArg args[] = {a, b, out};
    device.launch(*module, Grid{1}, args);
    for (int i = 0; i < 128; ++i) ASSERT_EQ(out.data_as<float>()[i], expected[i]) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(StorageDtypes, MatrixFragments,
                         ::testing::Values(DType::f32, DType::f16, DType::bf16),
                         [](const auto& info) { return std::string(ir::dtype_name(info.param)); });

}  // namespace
}  // namespace metile::runtime::testing
