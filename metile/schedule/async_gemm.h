// The canonical descriptor GEMM that sm90's wgmma_tma strategy lowers (docs/hopper.md): what
// lower::match_async_gemm found in the traced Tile IR, or why the kernel is not one, and the
// pipeline plan_schedule chose for it. Parameter indices are the kernel's.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "metile/ir/types.h"

namespace metile::schedule {

// A tensor extent: an i32 scalar parameter (param >= 0) or a constant (a Schedule specialises
// integer scalars).
struct Extent {
  int param = -1;
  int64_t value = 0;
  bool operator==(const Extent&) const = default;
};

struct AsyncGemm {
  std::string not_matched;  // why the kernel is not the canonical GEMM; empty when it is
  bool matched() const { return not_matched.empty(); }
  // Whether its tile is one wgmma_tma takes: 128 x {64, 128, 256} x 64 (two consumer warp
  // groups of 64 rows, 128-byte swizzled K rows).
  bool wgmma_tile() const {
    return block_m == 128 && block_k == 64 && (block_n == 64 || block_n == 128 || block_n == 256);
  }

  ir::DType dtype = ir::DType::bf16;  // of left and right (f16 or bf16)
  int64_t block_m = 0, block_n = 0, block_k = 0;
  int left = -1, right = -1;  // buffer parameters: left [rows, inner], right [inner, columns]
  int output = -1;            // the buffer parameter of the output [rows, columns]
  Extent rows, columns, inner;
  // Set by plan_schedule: ring stages, consumer warp groups (each 64 rows of the tile), the
  // grouped tile order's group height, and shared memory for the ring and its mbarriers.
  int stages = 0;
  int consumers = 0;
  int group_m = 8;
  int64_t ring_bytes = 0;

  nlohmann::json to_json() const;
};

}  // namespace metile::schedule
