#include "metile/graph/run/matmul_tiles.h"

#include <algorithm>

#include "metile/dsl/trace.h"
#include "metile/graph/fusion/fusion_rules.h"

namespace metile::graph {

namespace {
// mma.sync / simdgroup tiles.
constexpr int64_t kBlockN = 64, kBlockK = 32, kMaxBlockM = 64, kMinBlockM = 16;
// wgmma tiles: two warp groups of 128 threads, each a 64-row block of the 128; one swizzled
// 128-byte row of 16-bit elements a K step; at most 128 accumulator registers a thread.
constexpr int64_t kWgmmaBlockM = 128, kWgmmaBlockK = 64, kWgmmaThreads = 256;
constexpr int64_t kWgmmaWideN = 256, kWgmmaNarrowN = 128;

std::string dims(int64_t m, int64_t n) {
  return std::to_string(m) + " x " + std::to_string(n);
}

// Why the region's matmuls cannot take wgmma's tiles; empty when they can.
std::string wgmma_unfit(const Graph& graph, const std::vector<int>& ops, int64_t m,
                        const target::Target& target) {
  if (!target.matrix_facilities.has(target::MatrixFacility::Wgmma))
    return "target " + target.name + " has no wgmma";
  if (m <= kMaxBlockM) return "M = " + std::to_string(m) + " is decode-sized (at most 64 rows)";
  for (int id : ops) {
    const Op& op = graph.op(id);
    if (op.kind != OpKind::Matmul) continue;
    DType a = graph.spec(op.inputs[0]).dtype, b = graph.spec(op.inputs[1]).dtype;
    if (a != b || (a != DType::f16 && a != DType::bf16))
      return op_label(graph, id) + " multiplies " + std::string(dtype_name(a)) + " by " +
             std::string(dtype_name(b)) + " (wgmma takes f16 or bf16 operands of one dtype)";
  }
  return "";
}
}  // namespace

MatmulTiles choose_matmul_tiles(const Graph& graph, const std::vector<int>& ops, const Shape& out,
                                bool spill, const target::Target& target) {
  const size_t rank = out.size();
  const int64_t m = out[rank - 2], n = out[rank - 1];
  int matmuls = 0;
  for (int id : ops) matmuls += graph.op(id).kind == OpKind::Matmul ? 1 : 0;
  MatmulTiles tiles;
  const std::string unfit = wgmma_unfit(graph, ops, m, target);
  if (unfit.empty()) {
    tiles.wgmma = true;
    tiles.block_m = kWgmmaBlockM;
    tiles.block_k = kWgmmaBlockK;
    tiles.block_n = matmuls == 1 && n > kWgmmaNarrowN ? kWgmmaWideN : kWgmmaNarrowN;
    tiles.threads = kWgmmaThreads;
    tiles.decision = "wgmma tiles of " + dims(tiles.block_m, tiles.block_n) + " over " +
                     shape_str(out) + ", K in steps of " + std::to_string(tiles.block_k) +
                     ", 8 warps (a 64-row block per warp group): M = " + std::to_string(m) +
                     " is prefill-sized and " + target.name + " has wgmma; ";
    if (matmuls == 1)
      tiles.decision +=
          "one matmul, so its K loop is the software pipeline's (wgmma_pipelined: both "
          "operands copied into a ring of swizzled slots)";
    else
      tiles.decision += std::to_string(matmuls) + " matmuls (N block 128" +
                        (spill ? ", one K loop each" : ", their accumulators live together") +
                        "), so every dot runs on wgmma_staged (b tiles through the prefetch ring)";
    return tiles;
  }
  tiles.block_m = std::clamp(dsl::next_power_of_2(m), kMinBlockM, kMaxBlockM);
  tiles.block_n = kBlockN;
  tiles.block_k = kBlockK;
  tiles.decision = "tiles of " + dims(tiles.block_m, tiles.block_n) + " over " + shape_str(out) +
                   ", K in steps of " + std::to_string(tiles.block_k) + " (not wgmma's: " + unfit +
                   ")";
  return tiles;
}

}  // namespace metile::graph
