// What the compiler did to one kernel, as JSON: the schedule plan, geometry, threadgroup
// allocations with byte counts, the passes that ran (and whether each changed the IR), loop
// widths, value layouts, the layout conversions the compiler removed, software buffering and
// fused epilogue regions (empty lists when none). Matrix fragments' lane maps are reported
// as "opaque": the compiler never relies on them.
// Every figure here is what the generated code does, not what was asked for.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "metile/schedule/schedule_plan.h"
#include "metile/schedule/software_pipeline.h"

namespace metile::schedule {

struct PassRecord {
  std::string name;
  std::string dialect;  // "tile" | "metal" | "msl"
  bool changed = false;
  double milliseconds = 0;
};

struct AllocationRecord {
  std::string purpose;
  int64_t offset = 0;
  int64_t bytes = 0;
  std::string dtype;
  int64_t elements = 0;
};

struct LoopRecord {
  std::string loop;
  int64_t tile_elements = 0;
  int elements_per_thread = 0;
};

struct RegisterReductionRecord {
  std::string operation;  // "sum (%12)"
  std::string dtype;
  int64_t threads = 0;
  int64_t registers = 0;
  std::string scratch;
};

// One layout conversion eliminate_redundant_conversions removed or shortened.
struct LayoutOptimizationRecord {
  std::string rule;  // "identity" | "inverse pair" | "chain"
  std::string conversion;
  std::string proof;
};

struct LayoutConversionRecord {
  std::string conversion;  // "%7"
  std::string mechanism;   // "forward", "simd_shuffle", "threadgroup scratch"
  std::string scratch;
};

struct BufferingRecord {
  std::string loop;
  std::string allocation;
  int stages = 2;
  int64_t bytes = 0;
};

struct FusedEpilogueRecord {
  std::string store;
  std::vector<std::string> ops;
  std::vector<std::string> scalar_parameters;
  std::string output_conversion;  // "f32 -> f16", or "none (f32)"
  std::string backend;            // the GEMM emitter that applies it
};

// One algorithm rewrite a pass considered (merge_online_reductions): applied under its law's
// certificate, or left out with the reason.
struct DiscoveryRecord {
  std::string rewrite;  // "online softmax"
  std::string where;    // the loops' lines
  bool applied = false;
  std::string law;
  std::vector<std::string> obligations;  // applied: the certificate's verified obligations
  int64_t cases_checked = 0;
  std::string detail;  // applied: what the code became; otherwise why not
};

// One loop peel_complete_iterations split: its first portion runs the iterations meeting
// `condition`, with `device_tiles` tile accesses unguarded; the remainder keeps the guards.
struct PeeledLoopRecord {
  std::string loop;
  int64_t device_tiles = 0;
  std::string condition;
};

// The K loops' pipelining (prefetch_dot_operands): the depth a launch asked for (Triton's
// num_stages; none when not given), the loops whose dot operands load one step ahead (two
// stages), and why no loop does when none is listed.
struct PipeliningRecord {
  std::optional<int64_t> requested_stages;
  std::vector<std::string> prefetched_loops;
  std::string reason;
};

struct ExecutionReport {
  std::string kernel;
  std::string target;
  std::array<int, 3> threads_per_threadgroup{1, 1, 1};
  std::string thread_plan_reason;
  std::string ownership;  // "contiguous: ..." or "striped: ...", with the reason
  std::string grid_rule;
  int64_t threadgroup_bytes = 0;
  std::vector<AllocationRecord> allocations;
  std::vector<PassRecord> passes;
  std::vector<LoopRecord> loops;
  std::vector<std::string> value_layouts;
  std::vector<RegisterReductionRecord> register_reductions;
  std::vector<LayoutOptimizationRecord> layout_optimizations;
  std::vector<LayoutConversionRecord> layout_conversions;
  std::vector<DiscoveryRecord> discoveries;
  // Guarded packed vector accesses emitted (group_vector_accesses): groups in the source,
  // not a count of the GPU's vector instructions (its compiler may still split them).
  int64_t grouped_loads = 0;
  int64_t grouped_stores = 0;
  int64_t grouped_copies = 0;  // packed asynchronous copies into pipeline slots
  // plan_schedule's decisions and reasons, which lowering implemented.
  SchedulePlan schedule_plan;
  std::vector<BufferingRecord> buffering;
  // The verified software pipelines of matrix K loops (software_pipeline.h).
  std::vector<SoftwarePipeline> pipelines;
  std::vector<FusedEpilogueRecord> fused_epilogues;
  std::vector<PeeledLoopRecord> peeled_loops;
  PipeliningRecord pipelining;
  std::string math_mode;  // "default" | "strict" | "relaxed"
  int64_t source_bytes = 0;

  nlohmann::json to_json() const;
  std::string str() const { return to_json().dump(2); }
};

}  // namespace metile::schedule
