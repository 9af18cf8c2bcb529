// How the flash_attention kernel tiles its work on a target: one fact shared by the kernel
// (run/attention_kernel.cc), which lowers by it, and the fusion planner's cost model
// (fusion/cost_model.h), which estimates the kernel's threadgroup memory from it.
//
// A program takes block_m query rows and walks the keys in blocks of block_n. On a target with
// wgmma, queries longer than 64 rows take 128 a program on 8 warps (a 64-row block per warp
// group), so that both dots run on wgmma (wgmma_staged), the K and V tiles copied a step ahead
// into a prefetch ring of two slots each; elsewhere 64 rows, and for short queries with
// grouped-query heads (decode) the group's heads share a program, their rows packed along M;
// there one K and one V tile are staged in threadgroup memory (rows padded for ldmatrix on
// mma.sync).
#pragma once

#include <cstdint>
#include <string>

#include "metile/graph/tensor_spec.h"
#include "metile/target/target.h"

namespace metile::graph {

struct AttentionTiles {
  int64_t block_m = 0;      // query rows a program
  int64_t block_n = 0;      // keys a step
  int64_t head_block = 0;   // q's and kt's head dimension, to a power of two
  int64_t value_block = 0;  // v's head dimension, to a power of two
  int64_t pack = 1;         // query heads packed along M (grouped-query decode), else 1
  bool wgmma_staged = false;
  bool mma_sync = false;  // the dots on mma.sync (a target with it, not wgmma_staged)
  int64_t threads = 0;    // threads a program

  int element_bytes = 0;  // of q, kt and v

  // Threadgroup bytes the kernel allocates for its K/V tiles on this path.
  int64_t threadgroup_bytes() const;
  std::string str() const;  // "128 query rows, K/V in blocks of 64, 256 threads, ..."
};

// q (..., L, D), kt (..., D, S) and v (..., S, E), batch axes broadcast (an axis of 1 in kt and
// v shared by q's heads). wgmma_staged needs 16-bit operands: f32 attention takes 128 rows on
// sm90 too, but its dots stay on mma.sync.
AttentionTiles attention_tiles(const TensorSpec& q, const TensorSpec& kt, const TensorSpec& v,
                               const target::Target& target);

}  // namespace metile::graph
