// The graph executor: compile(plan) turns every region of a FusionPlan into kernels
// (region_kernel.h), compiles them for one device and plans the intermediate buffers; the
// CompiledGraph it returns runs the whole graph.
//
//   FusionPlan plan = plan_graph_fusion(graph);
//   auto run = graph::compile(plan);
//   std::vector<runtime::Buffer> outputs = run->run({{"values", v}, {"residual", r}, ...});
//
// Intermediates (values that cross kernels but are not graph outputs) live in buffers the
// CompiledGraph owns, allocated once: a buffer is reused by a later value once every kernel
// reading its previous value has run. So one CompiledGraph runs one call at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "metile/compile.h"
#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"

namespace metile::graph {

struct GraphRunOptions {
  std::uintptr_t stream = 0;  // the device's queue (a CUstream on cuda); launches are queued
  bool wait = true;           // false: return once every launch is queued
};

class CompiledGraph {
 public:
  struct Kernel {
    RegionKernel lowered;
    std::shared_ptr<const metile::CompiledKernel> compiled;
  };

  CompiledGraph(FusionPlan plan, ViewPlan views, std::vector<Kernel> kernels,
                runtime::Device& device);

  const FusionPlan& plan() const { return plan_; }
  const std::vector<Kernel>& kernels() const { return kernels_; }
  const ViewPlan& views() const { return views_; }
  runtime::Device& device() const { return device_; }
  // The graph's inputs and outputs: names ("values"; "%4" for outputs) and types.
  std::vector<std::string> input_names() const;
  std::vector<TensorSpec> input_specs() const;
  std::vector<TensorSpec> output_specs() const;
  // The inputs a run writes: caches an in-place cache_update updates where they live.
  std::vector<std::string> in_place_inputs() const;

  // Runs the graph on `inputs` (by input name, buffers of this device) and returns the
  // outputs in the graph's order, newly allocated. UserError naming the input when one is
  // missing, unknown, of another shape, dtype or device, or too small.
  std::vector<runtime::Buffer> run(const std::map<std::string, runtime::Buffer>& inputs,
                                   const GraphRunOptions& options = {}) const;
  // The same, writing into `outputs` (one buffer per graph output, checked like inputs).
  void run(const std::map<std::string, runtime::Buffer>& inputs,
           const std::vector<runtime::Buffer>& outputs, const GraphRunOptions& options = {}) const;

  // JSON: the plan's report, then every kernel (its region, ops, form, grid, how it was
  // lowered), the views (values read in place through strides, no kernel) and the
  // intermediate buffers (how many values, how many buffers after reuse).
  std::string explain() const;

 private:
  void plan_buffers();
  void check(const std::string& what, const TensorSpec& spec, const runtime::Buffer& b) const;

  FusionPlan plan_;
  ViewPlan views_;
  std::vector<Kernel> kernels_;
  runtime::Device& device_;
  std::map<int, int> slot_of_value_;  // intermediate value id -> buffer slot
  std::vector<runtime::Buffer> slots_;
};

// How compile() lowers a plan.
struct GraphOptions {
  // The SwiGLU regions' schedule: "register-fused" or "scratch-spilled"; empty: the plan's.
  std::string parallel_epilogue_schedule;
  // false: every transpose, reshape and slice is copied by a kernel of its own instead of
  // being read in place (views.h); to compare the two.
  bool views = true;
};

// Lowers and compiles every region of `plan` for options.device (default: the default
// device). UserError "not supported" for a region no emitter lowers.
std::shared_ptr<const CompiledGraph> compile(const FusionPlan& plan,
                                             const CompileOptions& options = {},
                                             const GraphOptions& graph_options = {});

}  // namespace metile::graph
