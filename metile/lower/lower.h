// What lowering Tile IR to Metal IR hands the pipeline and the execution report. The steps,
// each a registered pass (metile/pass_registry.h) in a file of its own:
//
//   expand_tensor_access (expand_tensor_access.h): descriptors -> pointers + bounds masks
//   plan_threads (plan_threads.h): threads per threadgroup, with the reason in words
//   lower_to_metal (lower_to_metal.h): tiles -> one SSA scalar per register slot
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/lower/plan_threads.h"
#include "metile/schedule/software_pipeline.h"

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

// One sequential FP32 sum lowered as a register reduction: a balanced tree over the thread's
// slots, simd_sum, and partials in private scratch that every SIMD group reads and finishes
// itself, with no release barrier.
struct RegisterReduction {
  std::string operation;  // "sum (%12)"
  ir::DType dtype = ir::DType::f32;
  int64_t threads = 0;
  int64_t registers = 0;  // slots per thread
  std::string scratch;    // "private scratch at offset 0, 32 bytes" or "none: one SIMD group"
};

// How one convert_layout moved its values.
struct LayoutConversion {
  std::string conversion;  // "%7"
  std::string mechanism;   // "forward", "simd_shuffle" or "threadgroup scratch"
  std::string scratch;     // "shared scratch at offset 0, 256 bytes" or "none"
};

// One software buffer a matrix lowering materialised (double_buffer: stages == 2).
struct Buffering {
  std::string loop;        // "for %7 (line 12)"
  std::string allocation;  // the threadgroup allocation's purpose, as in Allocation
  int stages = 2;
  int64_t bytes = 0;  // all stages together
};

// One pointwise epilogue a matrix lowering fused into the store of a product.
struct FusedEpilogue {
  std::string store;                           // "tensor_store %21"
  std::vector<std::string> ops;                // "mul", "add", "select", ... in order
  std::vector<std::string> scalar_parameters;  // runtime scalars captured at kernel entry
  std::string output_conversion;               // "f32 -> f16", or "none (f32)"
  std::string backend;                         // the GEMM emitter that applies it
};

// What lowering decided besides the Metal IR; the execution report lists it.
struct LoweringFacts {
  std::vector<Allocation> allocations;
  std::vector<LoopInfo> loops;
  std::vector<std::string>
      value_layouts;  // "%5: identity(1024 elements, 256 threads, 4 per thread)"
  std::vector<RegisterReduction> register_reductions;
  std::vector<LayoutConversion> layout_conversions;
  std::vector<Buffering> buffering;            // empty: nothing is software-buffered
  std::vector<FusedEpilogue> fused_epilogues;  // empty: no epilogue fused
  // The software pipelines materialised (verify_software_pipeline fills in `verified`).
  std::vector<schedule::SoftwarePipeline> pipelines;
};

struct LoweringResult : LoweringFacts {
  ir::Kernel metal;
  ThreadPlan plan;
};

}  // namespace metile::lower
