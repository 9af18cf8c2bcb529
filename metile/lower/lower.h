// Lowering Tile IR to Metal IR: the results the pipeline and the execution report consume,
// and the one-call entry point metile-opt's `lower` pass uses.
//
//   expand_tensor_access (expand_tensor_access.h): descriptors -> pointers + bounds masks
//   plan_threads (plan_threads.h): threads per threadgroup, with the reason in words
//   lower_to_metal (lower_to_metal.h): tiles -> one SSA scalar per register slot
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::lower {

// One region of the kernel's threadgroup block.
struct Allocation {
  std::string purpose;  // "reduce.sum scratch", "shared_alloc %5", "broadcast exchange"
  int64_t offset = 0;   // bytes from the start of the block
  int64_t bytes = 0;
  ir::DType dtype = ir::DType::f32;
  int64_t elements = 0;
};

// The loop widths of one `for` that carries or processes tiles.
struct LoopInfo {
  std::string loop;  // "for %7 (line 12)"
  int64_t tile_elements = 0;
  int elements_per_thread = 0;
};

// How many threads share the kernel's tiles, and why.
struct ThreadPlan {
  int threads_per_threadgroup = 0;
  std::string reason;
};

struct LoweringResult {
  ir::Kernel metal;
  ThreadPlan plan;
  std::vector<Allocation> allocations;
  std::vector<LoopInfo> loops;
  std::vector<std::string>
      value_layouts;  // "%5: identity(1024 elements, 256 threads, 4 per thread)"
};

// expand_tensor_access -> plan_threads -> lower_to_metal; returns the Metal IR kernel.
ir::Kernel lower_to_metal_ir(ir::Kernel tile, const target::Target& target);

}  // namespace metile::lower
