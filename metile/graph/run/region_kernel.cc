#include "metile/graph/run/region_kernel.h"

#include <algorithm>
#include <map>
#include <set>

#include "metile/graph/run/attention_kernel.h"
#include "metile/graph/run/copy_kernel.h"
#include "metile/graph/run/gather_kernels.h"
#include "metile/graph/run/matmul_kernel.h"
#include "metile/graph/run/rotary_kernel.h"
#include "metile/graph/run/row_kernel.h"
#include "metile/graph/run/transpose_kernel.h"
#include "metile/graph/run/views.h"
#include "metile/support/errors.h"

namespace metile::graph {

namespace {
struct Stage {
  std::vector<int> ops, inputs, outputs;
};

// A matmul reading another matmul's result in the region starts a new stage; the
// intermediate between stages is written to memory (the SwiGLU block's hidden activation).
std::vector<Stage> matmul_stages(const Graph& graph, const FusedRegion& region) {
  std::map<int, int> stage_of_value;  // values produced in the region
  std::vector<Stage> stages;
  for (int id : region.op_ids) {
    const Op& op = graph.op(id);
    int stage = 0;
    for (int v : op.inputs)
      if (auto it = stage_of_value.find(v); it != stage_of_value.end())
        stage = std::max(stage, it->second + (op.kind == OpKind::Matmul ? 1 : 0));
    stage_of_value[op.output] = stage;
    if (stage >= static_cast<int>(stages.size())) stages.resize(stage + 1);
    stages[stage].ops.push_back(id);
  }
  for (size_t s = 0; s < stages.size(); ++s) {
    Stage& stage = stages[s];
    std::set<int> produced;
    for (int id : stage.ops) produced.insert(graph.op(id).output);
    for (int id : stage.ops)
      for (int v : graph.op(id).inputs)
        if (!produced.count(v) &&
            std::find(stage.inputs.begin(), stage.inputs.end(), v) == stage.inputs.end())
          stage.inputs.push_back(v);
    for (int id : stage.ops) {
      int v = graph.op(id).output;
      bool escapes = graph.is_output(v);
      for (int user : graph.value(v).users)
        escapes = escapes || std::find(stage.ops.begin(), stage.ops.end(), user) == stage.ops.end();
      if (escapes) stage.outputs.push_back(v);
    }
  }
  return stages;
}
}  // namespace

std::string param_name(const Graph& graph, int value) {
  const ValueInfo& info = graph.value(value);
  return info.producer < 0 ? info.name : "v" + info.name;
}

namespace {
// The kernels of an Opaque op, which runs alone (fusion rule 1).
std::vector<RegionKernel> opaque_kernels(const Graph& graph, const ViewPlan& views, int id,
                                         const target::Target& target) {
  const Op& op = graph.op(id);
  switch (op.kind) {
    case OpKind::FlashAttention:
      return {attention_kernel(graph, views, id, target)};
    case OpKind::Transpose:
      if (views.view_ops.count(id)) return {};
      // The tiled transpose writes and reads rows; other axes, or a strided input, copy.
      if (!op.attrs.count("axis0") && !views.is_view(op.inputs[0]))
        return {transpose_kernel(graph, id)};
      return copy_kernels(graph, views, id);
    case OpKind::Reshape:
    case OpKind::Slice:
      if (views.view_ops.count(id)) return {};
      return copy_kernels(graph, views, id);
    case OpKind::Concat:
      return copy_kernels(graph, views, id);
    case OpKind::Rotary:
      return {rotary_kernel(graph, views, id)};
    case OpKind::Embedding:
      return {embedding_kernel(graph, views, id)};
    case OpKind::CacheUpdate:
      return {cache_update_kernel(graph, views, id)};
    case OpKind::Add:
    case OpKind::Subtract:
    case OpKind::Multiply:
    case OpKind::Divide:
    case OpKind::Scale:
    case OpKind::Exp:
    case OpKind::Silu:
    case OpKind::Cast:
    case OpKind::CausalMask:
    case OpKind::RmsNorm:
    case OpKind::Softmax:
    case OpKind::Sum:
    case OpKind::Max:
    case OpKind::Mean:
    case OpKind::Matmul:
      break;
  }
  throw InternalError("opaque_kernels: " + op_label(graph, id) + " is not opaque");
}
}  // namespace

std::vector<RegionKernel> lower_region(const FusionPlan& plan, const ViewPlan& views,
                                       const FusedRegion& region, const std::string& schedule,
                                       const target::Target& target) {
  const Graph& graph = plan.graph;
  std::vector<RegionKernel> kernels;
  bool has_matmul = false, opaque = false;
  for (int id : region.op_ids) {
    OpKind kind = graph.op(id).kind;
    if (fusion_class(kind) == FusionClass::Opaque) {
      opaque = true;
      for (RegionKernel& k : opaque_kernels(graph, views, id, target))
        kernels.push_back(std::move(k));
    }
    has_matmul = has_matmul || kind == OpKind::Matmul;
  }
  if (!opaque && has_matmul) {
    std::string chosen = schedule.empty() ? region.schedule : schedule;
    if (!chosen.empty() && chosen != "register-fused" && chosen != "scratch-spilled")
      throw UserError("graph executor: schedule '" + chosen +
                      "' is neither 'register-fused' nor 'scratch-spilled'");
    // The scratch-spilled schedule is the gate/up stage's, of a parallel_epilogue region.
    bool spill = region.rule == "parallel_epilogue" && chosen == "scratch-spilled";
    std::vector<Stage> stages = matmul_stages(graph, region);
    for (size_t s = 0; s < stages.size(); ++s) {
      kernels.push_back(matmul_kernel(graph, views, stages[s].ops, stages[s].inputs,
                                      stages[s].outputs, spill && s == 0, target));
      if (stages.size() > 1)
        kernels.back().decision += "; stage " + std::to_string(s + 1) + " of " +
                                   std::to_string(stages.size()) +
                                   " (a matmul reads the previous stage's result)";
    }
  } else if (!opaque) {
    for (int v : region.inputs)
      if (views.is_view(v))
        throw InternalError("lower_region: the row region " + std::to_string(region.id) +
                            " reads the view " + graph.value(v).ref());
    kernels.push_back(row_kernel(graph, region.op_ids, region.inputs, region.outputs));
  }
  for (RegionKernel& k : kernels) k.region = region.id;
  return kernels;
}

}  // namespace metile::graph
