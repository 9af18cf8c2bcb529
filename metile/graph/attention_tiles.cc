#include "metile/graph/attention_tiles.h"

namespace metile::graph {

namespace {
constexpr int64_t kLongBlockM = 128, kShortBlockM = 64, kBlockN = 64, kThreads = 256;
// Slots start on 1024-byte boundaries (the 128-byte swizzle's period).
constexpr int64_t kSlotAlignment = 1024;
// mma.sync's staged operand rows are padded so that an ldmatrix's eight rows hit distinct banks.
constexpr int64_t kLdmatrixRowPad = 16;

int64_t power_of_2_at_least(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int64_t aligned(int64_t bytes) {
  return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
}
}  // namespace

AttentionTiles attention_tiles(const TensorSpec& q_spec, const TensorSpec& kt_spec,
                               const TensorSpec& v_spec, const target::Target& target) {
  const Shape &q = q_spec.shape, &kt = kt_spec.shape, &v = v_spec.shape;
  const size_t r = q.size();
  AttentionTiles t;
  t.block_n = kBlockN;
  t.head_block = power_of_2_at_least(q[r - 1]);
  t.value_block = power_of_2_at_least(v[r - 1]);
  t.element_bytes = dtype_bytes(q_spec.dtype);
  const int64_t length = q[r - 2];
  if (r >= 3 && q[r - 3] > 1 && kt[r - 3] == 1 && length < kShortBlockM) t.pack = q[r - 3];
  const bool long_rows = target.matrix_facilities.has(target::MatrixFacility::Wgmma) &&
                         t.pack == 1 && length > kShortBlockM;
  t.block_m = long_rows ? kLongBlockM : kShortBlockM;
  t.wgmma_staged = long_rows && (q_spec.dtype == DType::f16 || q_spec.dtype == DType::bf16);
  t.mma_sync = !t.wgmma_staged && target.matrix_facilities.has(target::MatrixFacility::MmaSync);
  t.threads = kThreads;
  return t;
}

int64_t AttentionTiles::threadgroup_bytes() const {
  if (wgmma_staged) {
    // Two slots of each of the K [D, 64] and V [64, E] tiles (the prefetch ring).
    const int64_t k_tile = head_block * block_n * element_bytes;
    const int64_t v_tile = block_n * value_block * element_bytes;
    return 2 * (aligned(k_tile) + aligned(v_tile));
  }
  // f32 dots stage more than their operands (measured up to 1.5x): twice the K and V tiles
  // bounds them.
  if (element_bytes != 2) return 2 * (head_block + value_block) * block_n * element_bytes;
  // One staged K and V tile, rows padded by 16 bytes for ldmatrix where the dots are mma.sync.
  const int64_t pad = mma_sync ? kLdmatrixRowPad : 0;
  return head_block * (block_n * element_bytes + pad) +
         block_n * (value_block * element_bytes + pad);
}

std::string AttentionTiles::str() const {
  std::string s = std::to_string(block_m) + " query rows a program, K/V in blocks of " +
                  std::to_string(block_n) + ", " + std::to_string(threads) + " threads";
  if (wgmma_staged) s += ", both dots on wgmma (wgmma_staged, K/V tiles in a 2-slot prefetch ring)";
  return s;
}

}  // namespace metile::graph
