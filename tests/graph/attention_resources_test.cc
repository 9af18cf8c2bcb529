// The planner's threadgroup-memory estimate for a flash_attention kernel
// (CostModel::flash_attention_resources) against what the kernel allocates when it is lowered
// for the same target: the estimate is the allocation for f16 (a bound for f32), on the host
// (Apple) and sm90 targets, at head dimensions 64 and 128, for long queries (sm90: 128 rows,
// wgmma_staged with its prefetch ring), short ones and packed grouped-query heads.
#include <gtest/gtest.h>

#include "metile/graph/fusion/cost_model.h"
#include "metile/graph/graph_builder.h"
#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"
#include "metile/pipeline.h"
#include "metile/target/target.h"

namespace metile::graph {
namespace {

struct Case {
  const char* target;
  int64_t head_dim, length, kv_heads, group;
  const char* dtype = "f16";
};

class AttentionResources : public ::testing::TestWithParam<Case> {};

TEST_P(AttentionResources, EstimateHoldsWhatTheKernelAllocates) {
  const Case c = GetParam();
  const target::Target& target = target::target_by_name(c.target);
  GraphBuilder b;
  const int64_t kv_group = c.group > 1 ? 1 : c.group;
  Value q = b.input("q", TensorSpec({c.kv_heads, c.group, c.length, c.head_dim}, c.dtype));
  Value k = b.input("k", TensorSpec({c.kv_heads, kv_group, c.length, c.head_dim}, c.dtype));
  Value v = b.input("v", TensorSpec({c.kv_heads, kv_group, c.length, c.head_dim}, c.dtype));
  Value scores = b.causal_mask(b.scale(b.matmul(q, b.transpose(k)), 0.125));
  FusionPlan plan = plan_graph_fusion(b.build({b.matmul(b.softmax(scores), v)}), target);
  ASSERT_EQ(plan.rewrites.size(), 1u) << plan.explain();
  const int node = plan.rewrites[0].node;
  const Op& op = plan.graph.op(node);
  const OpResources estimate = CostModel(target).flash_attention_resources(
      plan.graph.spec(op.inputs[0]), plan.graph.spec(op.inputs[1]), plan.graph.spec(op.inputs[2]));
  ViewPlan views = plan_views(plan.graph);
  PipelineOptions options;
  options.target = &target;
  for (const FusedRegion& region : plan.regions)
    for (RegionKernel& kernel : lower_region(plan, views, region, "", target)) {
      if (kernel.form != "flash_attention") continue;
      const int64_t allocated = compile_to_source(kernel.kernel, options).report.threadgroup_bytes;
      EXPECT_GE(estimate.threadgroup_bytes, allocated) << kernel.decision;
      // 16-bit attention exactly; f32's dots stage more, which the estimate bounds.
      if (std::string(c.dtype) == "f16") {
        EXPECT_EQ(estimate.threadgroup_bytes, allocated) << kernel.decision;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Targets, AttentionResources,
                         ::testing::Values(Case{"sm90", 128, 200, 2, 1},
                                           Case{"sm90", 64, 200, 2, 1}, Case{"sm90", 128, 40, 2, 1},
                                           Case{"sm90", 128, 16, 2, 4},
                                           Case{"host", 128, 200, 2, 1},
                                           Case{"host", 64, 200, 2, 1}, Case{"host", 64, 16, 2, 4},
                                           Case{"sm90", 64, 200, 2, 1, "f32"},
                                           Case{"host", 32, 40, 2, 1, "f32"}));

}  // namespace
}  // namespace metile::graph
