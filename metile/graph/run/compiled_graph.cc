#include "metile/graph/run/compiled_graph.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "metile/graph/run/op_emitters.h"
#include "metile/runtime/devices.h"
#include "metile/support/errors.h"

namespace metile::graph {

namespace {
std::string buffer_text(const runtime::Buffer& b) {
  std::string s = std::to_string(b.size_bytes()) + " bytes";
  if (b.dtype()) s += " of " + std::string(ir::dtype_name(*b.dtype()));
  if (!b.shape().empty()) s += ", shape " + shape_str(b.shape());
  return s;
}
}  // namespace

CompiledGraph::CompiledGraph(FusionPlan plan, ViewPlan views, std::vector<Kernel> kernels,
                             runtime::Device& device)
    : plan_(std::move(plan)),
      views_(std::move(views)),
      kernels_(std::move(kernels)),
      device_(device) {
  plan_buffers();
}

// Greedy reuse by liveness over the launch order: a value takes the smallest free buffer
// that holds it; its buffer is free again after the last kernel that reads it.
void CompiledGraph::plan_buffers() {
  const Graph& g = plan_.graph;
  std::map<int, size_t> last_use;
  for (size_t i = 0; i < kernels_.size(); ++i)
    for (int v : kernels_[i].lowered.params) last_use[v] = i;
  std::vector<int64_t> slot_bytes;
  std::set<int> free_slots;
  std::vector<std::pair<size_t, int>> releases;  // (after kernel, slot)
  for (size_t i = 0; i < kernels_.size(); ++i) {
    for (auto it = releases.begin(); it != releases.end();)
      if (it->first < i) {
        free_slots.insert(it->second);
        it = releases.erase(it);
      } else {
        ++it;
      }
    for (int v : kernels_[i].lowered.writes) {
      // Outputs and inputs (an in-place cache_update writes its cache input) are the caller's.
      if (g.is_output(v) || g.value(v).producer < 0 || slot_of_value_.count(v)) continue;
      int64_t bytes = g.spec(v).bytes();
      int best = -1;
      for (int s : free_slots)
        if (slot_bytes[s] >= bytes && (best < 0 || slot_bytes[s] < slot_bytes[best])) best = s;
      if (best < 0) {
        best = static_cast<int>(slot_bytes.size());
        slot_bytes.push_back(bytes);
      } else {
        free_slots.erase(best);
      }
      slot_of_value_[v] = best;
      releases.push_back({last_use[v], best});
    }
  }
  for (int64_t bytes : slot_bytes) slots_.push_back(device_.allocate(static_cast<size_t>(bytes)));
}

std::vector<std::string> CompiledGraph::input_names() const {
  std::vector<std::string> names;
  for (int v : plan_.graph.inputs()) names.push_back(plan_.graph.value(v).name);
  return names;
}

std::vector<TensorSpec> CompiledGraph::input_specs() const {
  std::vector<TensorSpec> specs;
  for (int v : plan_.graph.inputs()) specs.push_back(plan_.graph.spec(v));
  return specs;
}

std::vector<std::string> CompiledGraph::in_place_inputs() const {
  std::vector<std::string> names;
  for (const Op& op : plan_.graph.ops())
    if (op.kind == OpKind::CacheUpdate && op.attrs.count("in_place") && op.int_attr("in_place"))
      names.push_back(plan_.graph.value(op.inputs[0]).name);
  return names;
}

std::vector<TensorSpec> CompiledGraph::output_specs() const {
  std::vector<TensorSpec> specs;
  for (int v : plan_.graph.outputs()) specs.push_back(plan_.graph.spec(v));
  return specs;
}

void CompiledGraph::check(const std::string& what, const TensorSpec& spec,
                          const runtime::Buffer& b) const {
  std::string expected = "expected " + spec.str();
  if (!b.valid()) throw UserError(what + ": " + expected + ", got an empty buffer");
  if (&b.device() != &device_)
    throw UserError(what + ": the buffer is on device '" + b.device().name() +
                    "', the graph was compiled for '" + device_.name() + "'");
  if (b.dtype() && *b.dtype() != storage_dtype(spec.dtype))
    throw UserError(what + ": " + expected + ", got " + buffer_text(b) + " (dtype differs)");
  if (!b.shape().empty() && b.shape() != spec.shape)
    throw UserError(what + ": " + expected + ", got " + buffer_text(b) + " (shape differs)");
  if (static_cast<int64_t>(b.size_bytes()) < spec.bytes())
    throw UserError(what + ": " + expected + " (" + std::to_string(spec.bytes()) + " bytes), got " +
                    buffer_text(b));
}

std::vector<runtime::Buffer> CompiledGraph::run(
    const std::map<std::string, runtime::Buffer>& inputs, const GraphRunOptions& options) const {
  std::vector<runtime::Buffer> outputs;
  for (int v : plan_.graph.outputs()) {
    const TensorSpec& spec = plan_.graph.spec(v);
    outputs.push_back(device_.allocate(storage_dtype(spec.dtype), spec.shape));
  }
  run(inputs, outputs, options);
  return outputs;
}

void CompiledGraph::run(const std::map<std::string, runtime::Buffer>& inputs,
                        const std::vector<runtime::Buffer>& outputs,
                        const GraphRunOptions& options) const {
  const Graph& g = plan_.graph;
  std::map<int, runtime::Buffer> bound;
  for (const auto& [name, buffer] : inputs) {
    auto it = std::find_if(g.inputs().begin(), g.inputs().end(),
                           [&](int v) { return g.value(v).name == name; });
    if (it == g.inputs().end()) {
      std::string names;
      for (const std::string& n : input_names()) names += (names.empty() ? "" : ", ") + n;
      throw UserError("graph input '" + name + "' is not an input of the graph (inputs: " + names +
                      ")");
    }
    check("graph input '" + name + "'", g.spec(*it), buffer);
    bound[*it] = buffer;
  }
  for (int v : g.inputs())
    if (!bound.count(v))
      throw UserError("graph input '" + g.value(v).name + "' (" + g.spec(v).str() + ") is missing");
  if (outputs.size() != g.outputs().size())
    throw UserError("graph run: " + std::to_string(outputs.size()) + " output buffers for " +
                    std::to_string(g.outputs().size()) + " graph outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    int v = g.outputs()[i];
    check("graph output " + std::to_string(i) + " (" + g.value(v).ref() + ")", g.spec(v),
          outputs[i]);
    bound[v] = outputs[i];
  }
  for (const auto& [v, slot] : slot_of_value_) bound[v] = slots_[slot];

  runtime::LaunchOptions launch{options.stream, false};
  for (const Kernel& k : kernels_) {
    std::vector<KernelArg> args;
    for (int v : k.lowered.params) args.push_back(bound.at(v));
    k.compiled->launch(k.lowered.grid, args, launch);
  }
  if (options.wait) device_.synchronize();
}

std::string CompiledGraph::explain() const {
  using Json = nlohmann::ordered_json;
  const Graph& g = plan_.graph;
  Json report;
  report["device"] = device_.name();
  // This executor always runs the fused kernels; say so rather than imply a measurement.
  report["dispatch"] =
      "fused: every region runs its kernels, unmeasured (Python's "
      "plan.compile(dispatch=\"measured\") decides each region against the framework)";
  report["plan"] = Json::parse(plan_.explain());
  Json& list = report["kernels"] = Json::array();
  for (const Kernel& k : kernels_) {
    Json ops = Json::array(), params = Json::array();
    for (int id : k.lowered.op_ids) ops.push_back(plan_.op_labels[id]);
    for (int v : k.lowered.params) params.push_back(g.value(v).ref());
    list.push_back({{"region", k.lowered.region},
                    {"kernel", k.compiled->name()},
                    {"form", k.lowered.form},
                    {"ops", ops},
                    {"params", params},
                    {"grid", k.lowered.grid},
                    {"decision", k.lowered.decision}});
  }
  Json& view_list = report["views"] = Json::object();
  for (const auto& [v, view] : views_.views) view_list[g.value(v).ref()] = view.str(g);
  Json assignment = Json::object();
  int64_t bytes = 0;
  for (const auto& [v, slot] : slot_of_value_) assignment[g.value(v).ref()] = slot;
  for (const runtime::Buffer& b : slots_) bytes += static_cast<int64_t>(b.size_bytes());
  report["intermediates"] = {{"values", slot_of_value_.size()},
                             {"buffers", slots_.size()},
                             {"bytes", bytes},
                             {"buffer_of_value", assignment}};
  return report.dump(2);
}

std::shared_ptr<const CompiledGraph> compile(const FusionPlan& plan, const CompileOptions& options,
                                             const GraphOptions& graph_options) {
  runtime::Device& device =
      options.device.empty() ? runtime::default_device() : runtime::get_device(options.device);
  ViewPlan views = plan_views(plan.graph, graph_options.views);
  std::vector<CompiledGraph::Kernel> kernels;
  for (const FusedRegion& region : plan.regions)
    for (RegionKernel& lowered : lower_region(
             plan, views, region, graph_options.parallel_epilogue_schedule, device.target())) {
      auto compiled = metile::compile(lowered.kernel, options);
      kernels.push_back({std::move(lowered), std::move(compiled)});
    }
  return std::make_shared<const CompiledGraph>(plan, std::move(views), std::move(kernels), device);
}

}  // namespace metile::graph
