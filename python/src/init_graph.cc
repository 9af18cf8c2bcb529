// Graph planning for Python: TensorSpec, GraphBuilder (records a compute DAG, checking
// shapes and dtypes where ops are added), and plan_graph_fusion (discovers certified
// rewrites, then chooses the kernels).
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "init.h"
#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/graph_builder.h"
#include "metile/graph/graph_parser.h"
#include "metile/graph/run/compiled_graph.h"
#include "metile/runtime/devices.h"
#include "metile/target/target.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace metile::python {

namespace {
// A region as Python sees it: value ids resolved to names ("%values", "%3"), roles to op
// labels ("%4 = matmul").
struct Region {
  int id;
  std::vector<std::string> ops, inputs, outputs;
  int64_t bytes_saved;
  int launches_saved;
  std::string rule, form, schedule;
  std::map<std::string, std::string> roles;
};

std::vector<std::string> names(const graph::FusionPlan& plan, const std::vector<int>& ids) {
  std::vector<std::string> r;
  for (int id : ids) r.push_back(plan.value_names.at(id));
  return r;
}

std::vector<Region> regions(const graph::FusionPlan& plan) {
  std::vector<Region> r;
  for (const graph::FusedRegion& g : plan.regions) {
    std::map<std::string, std::string> roles;
    for (const auto& [role, op] : g.roles) roles[role] = plan.op_labels.at(op);
    r.push_back({g.id, g.ops, names(plan, g.inputs), names(plan, g.outputs), g.bytes_saved,
                 g.launches_saved, g.rule, g.form, g.schedule, roles});
  }
  return r;
}

void bind_specs(nb::module_& m) {
  nb::class_<graph::TensorSpec>(m, "TensorSpec", "The type of a graph tensor: shape and dtype.")
      .def(nb::init<graph::Shape, std::string_view>(), "shape"_a, "dtype"_a,
           "A shape (a sequence of positive ints) and a dtype: f16, bf16, f32 or i32.")
      .def_prop_ro(
          "shape", [](const graph::TensorSpec& s) { return s.shape; }, "The shape.")
      .def_prop_ro(
          "dtype",
          [](const graph::TensorSpec& s) { return std::string(graph::dtype_name(s.dtype)); },
          "The dtype name.")
      .def("__repr__", [](const graph::TensorSpec& s) { return "TensorSpec" + s.str(); });
  nb::class_<graph::Value>(m, "GraphValue", "A value recorded by a GraphBuilder.")
      .def_prop_ro(
          "id", [](const graph::Value& v) { return v.id; }, "The value id in its graph.");
  nb::class_<graph::Graph>(m, "Graph", "A typed compute DAG built by GraphBuilder.build.")
      .def("__str__", &graph::Graph::str, "The text form, one op per line.")
      .def_prop_ro("inputs", &graph::Graph::inputs, "The input value ids.")
      .def_prop_ro("outputs", &graph::Graph::outputs, "The output value ids.");
}

void bind_builder(nb::module_& m) {
  using B = graph::GraphBuilder;
  using V = graph::Value;
  nb::class_<B>(m, "GraphBuilder",
                "Records tensor operations without choosing kernel boundaries. Each method "
                "checks shapes and dtypes; a mismatch raises CompilationError naming the op.")
      .def(nb::init<>(), "An empty graph.")
      .def("input", &B::input, "name"_a, "spec"_a, "A graph input named name of type spec.")
      .def("add", &B::add, "a"_a, "b"_a, "a + b (numpy broadcasting).")
      .def("subtract", &B::subtract, "a"_a, "b"_a, "a - b.")
      .def("multiply", &B::multiply, "a"_a, "b"_a, "a * b.")
      .def("divide", &B::divide, "a"_a, "b"_a, "a / b (floats).")
      .def("scale", &B::scale, "x"_a, "factor"_a, "x * factor.")
      .def("exp", &B::exp, "x"_a, "e^x.")
      .def("silu", &B::silu, "x"_a, "x * sigmoid(x).")
      .def("causal_mask", &B::causal_mask, "x"_a, "-inf above the diagonal of the last two axes.")
      .def("rms_norm", &B::rms_norm, "x"_a, "weight"_a, "eps"_a,
           "x * rsqrt(mean(x^2, last axis) + eps) * weight.")
      .def("softmax", &B::softmax, "x"_a, "axis"_a = -1, "Softmax along axis.")
      .def("sum", &B::sum, "x"_a, "axis"_a, "keepdims"_a = false, "Sum along axis.")
      .def("max", &B::max, "x"_a, "axis"_a, "keepdims"_a = false, "Maximum along axis.")
      .def("mean", &B::mean, "x"_a, "axis"_a, "keepdims"_a = false, "Mean along axis.")
      .def("matmul", &B::matmul, "a"_a, "b"_a, "a @ b over the last two axes.")
      .def("transpose", &B::transpose, "x"_a, "axis0"_a = -2, "axis1"_a = -1,
           "Swaps two axes (torch.transpose), by default the last two. A view when every "
           "reader reads strides (matmul, flash_attention, rotary): no kernel.")
      .def(
          "cast",
          [](B& b, V x, std::string_view dtype) { return b.cast(x, graph::parse_dtype(dtype)); },
          "x"_a, "dtype"_a, "x converted to dtype (f16, bf16, f32, i32).")
      .def("reshape", &B::reshape, "x"_a, "shape"_a,
           "The elements row-major with shape (one dimension may be -1); a view of a "
           "contiguous x.")
      .def("slice", &B::slice, "x"_a, "axis"_a, "start"_a, "stop"_a,
           "x[..., start:stop, ...] along axis; a view when its readers read strides.")
      .def("concat", &B::concat, "parts"_a, "axis"_a, "The parts joined along axis.")
      .def("rotary", &B::rotary, "x"_a, "cos"_a, "sin"_a,
           "Rotary position embedding, half rotation (Llama's rotate_half): x (..., T, D), cos "
           "and sin (T, D/2).")
      .def("embedding", &B::embedding, "table"_a, "ids"_a,
           "table[ids]: table (V, H), ids (...) i32 in [0, V).")
      .def("cache_update", &B::cache_update, "cache"_a, "new"_a, "position"_a, "in_place"_a = false,
           "cache (..., S, D) with rows [p, p + T) replaced by new (..., T, D); p = position[0], "
           "an i32 tensor of shape (1,) read at run time. A new tensor (the cache is copied); "
           "with in_place=True the T rows are written into the cache input's own buffer, which "
           "a run mutates, and the result is that buffer (no copy of the cache).")
      .def(
          "spec", [](const B& b, V v) { return b.spec(v); }, "value"_a, "The value's TensorSpec.")
      .def("build", &B::build, "outputs"_a,
           "The graph computing outputs; every op must contribute to an output.");
}

void bind_plan(nb::module_& m) {
  nb::class_<Region>(m, "FusedRegion", "One kernel of a fusion plan.")
      .def_ro("id", &Region::id, "The region's index in the plan.")
      .def_ro("ops", &Region::ops, "Op kind names in topological order, e.g. ['add', 'rms_norm'].")
      .def_ro("inputs", &Region::inputs, "Values read from outside the region ('%values').")
      .def_ro("outputs", &Region::outputs, "Values the region writes ('%2').")
      .def_ro("bytes_saved", &Region::bytes_saved, "Estimated device traffic avoided by fusing.")
      .def_ro("launches_saved", &Region::launches_saved, "Kernel launches avoided by fusing.")
      .def_ro("rule", &Region::rule,
              "'parallel_epilogue' or 'flash_attention' when a rule or rewrite formed the region, "
              "else ''.")
      .def_ro("roles", &Region::roles, "A rule region's ops by role: {'gate': '%4 = matmul', ...}.")
      .def_ro("form", &Region::form, "The epilogue's form: 'silu(gate) * up' or 'up * silu(gate)'.")
      .def_ro("schedule", &Region::schedule,
              "The rule region's schedule that fits the target: 'register-fused' or "
              "'scratch-spilled'.")
      .def("__repr__", [](const Region& r) {
        std::string s = "FusedRegion(ops=[";
        for (size_t i = 0; i < r.ops.size(); ++i) s += (i ? ", " : "") + r.ops[i];
        return s + "])";
      });
  using RW = graph::AttentionRewrite;
  nb::class_<RW>(m, "AttentionRewrite", "A flash_attention rewrite discovery applied.")
      .def_ro("replaced", &RW::replaced_labels, "The chain's ops in the input graph.")
      .def_ro("scale", &RW::scale, "The scale factor.")
      .def_ro("causal", &RW::causal, "Whether the chain was causally masked.")
      .def_ro("bytes_saved", &RW::bytes_saved, "Intermediate traffic no longer materialised.")
      .def_ro("launches_saved", &RW::launches_saved, "Kernel launches avoided.")
      .def_ro("certificate", &RW::certificate, "The weighted-softmax certificate licensing it.");
  using RR = graph::RejectedRewrite;
  nb::class_<RR>(m, "RejectedRewrite", "An attention chain discovery kept, and why.")
      .def_ro("rewrite", &RR::rewrite, "'flash_attention'.")
      .def_ro("ops", &RR::op_labels, "The chain's ops in the input graph.")
      .def_ro("reason", &RR::reason, "Why the graph was kept.");
  nb::class_<graph::FusionPlan>(m, "FusionPlan", "The kernels chosen for a graph.")
      .def_ro("graph", &graph::FusionPlan::graph,
              "The planned graph: the input after discovery's rewrites.")
      .def_ro("rewrites", &graph::FusionPlan::rewrites, "The rewrites applied.")
      .def_ro("rejected_rewrites", &graph::FusionPlan::rejected_rewrites,
              "The attention chains kept, with their reasons.")
      .def_prop_ro("regions", &regions, "The regions (kernels) in dependency order.")
      .def_prop_ro(
          "target", [](const graph::FusionPlan& p) { return p.target; }, "The target's name.")
      .def_prop_ro("bytes_saved", &graph::FusionPlan::bytes_saved, "Total estimated traffic saved.")
      .def_prop_ro("launches_saved", &graph::FusionPlan::launches_saved, "Total launches saved.")
      .def("explain", &graph::FusionPlan::explain,
           "JSON: each region with its savings, and why every rejected alternative lost.")
      .def(
          "_compile",
          [](const graph::FusionPlan& plan, const std::string& device, const std::string& schedule,
             bool views) {
            CompileOptions options;
            options.device = device;
            nb::gil_scoped_release release;
            return graph::compile(plan, options, {schedule, views});
          },
          "device"_a = "", "schedule"_a = "", "views"_a = true,
          "Lowers every region to kernels and compiles them for `device` (empty: the default "
          "device), SwiGLU regions with `schedule` ('register-fused' or 'scratch-spilled'; "
          "empty: the plan's), transposes, reshapes and slices read in place unless views is "
          "false; plan.compile() wraps the result as a callable.");
  m.def(
      "plan_graph_fusion",
      [](const graph::Graph& g, const std::string& target,
         const std::optional<discovery::ReductionLaw>& attention_law, bool parallel_epilogue) {
        // The default device's target: a graph is planned for where plan.compile() runs it.
        const target::Target& t = target == "default" ? runtime::default_device().target()
                                                      : target::target_by_name(target);
        graph::FusionOptions options;
        if (attention_law) options.discovery.attention_law = *attention_law;
        options.parallel_epilogue = parallel_epilogue;
        nb::gil_scoped_release release;
        return graph::plan_graph_fusion(g, t, options);
      },
      "graph"_a, "target"_a = "default", "attention_law"_a = nb::none(),
      "parallel_epilogue"_a = true,
      "Chooses the kernels of a graph for `target` (a target name; 'default': the default "
      "device's, sm90 where a GPU runs): certified rewrites first (attention_law licenses "
      "flash_attention, weighted_softmax by default), then legal multi-output regions selected "
      "by exact min cuts, and the SwiGLU block by ParallelEpilogueRule unless turned off.");
}

void bind_executor(nb::module_& m) {
  using CG = graph::CompiledGraph;
  nb::class_<CG>(m, "CompiledGraph", "A fusion plan's kernels, compiled for one device.")
      .def_prop_ro("input_names", &CG::input_names, "The graph inputs' names, in order.")
      .def_prop_ro("input_specs", &CG::input_specs, "The graph inputs' TensorSpecs.")
      .def_prop_ro("output_specs", &CG::output_specs, "The graph outputs' TensorSpecs.")
      .def_prop_ro("in_place_inputs", &CG::in_place_inputs,
                   "The inputs a run writes: caches of in-place cache_update ops.")
      .def_prop_ro(
          "device", [](const CG& g) { return g.device().name(); }, "The device's name.")
      .def_prop_ro(
          "kernel_count", [](const CG& g) { return g.kernels().size(); },
          "How many kernels one run launches.")
      .def("explain", &CG::explain,
           "JSON: the plan's report, every kernel with how its region was lowered, and the "
           "intermediate buffers.")
      .def(
          "run",
          [](const CG& g, const std::map<std::string, runtime::Buffer>& inputs,
             const std::optional<std::vector<runtime::Buffer>>& outputs, uintptr_t stream,
             bool wait) {
            graph::GraphRunOptions options{stream, wait};
            nb::gil_scoped_release release;
            if (outputs) {
              g.run(inputs, *outputs, options);
              return *outputs;
            }
            return g.run(inputs, options);
          },
          "inputs"_a, "outputs"_a = nb::none(), "stream"_a = 0, "wait"_a = true,
          "Runs the graph on device buffers by input name; returns the output buffers (those "
          "given, or new ones). CompilationError naming the input that is missing or does not "
          "match.");
  m.def("parse_graph", &graph::parse_graph, "text"_a,
        "The graph of a text form (Graph.__str__): op lines in any order, replayed through "
        "GraphBuilder; CompilationError naming the node for an unknown op, a missing input, a "
        "cycle or a type the op does not compute.");
}
}  // namespace

void init_graph(nb::module_& m) {
  bind_specs(m);
  bind_builder(m);
  bind_plan(m);
  bind_executor(m);
}

}  // namespace metile::python
