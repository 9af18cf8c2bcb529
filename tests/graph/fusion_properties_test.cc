// Properties every plan must have, on many generated graphs: each op in exactly one region,
// every region legal and within the target's limits, regions in dependency order, outputs
// exactly the values used outside, and the same plan every time.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "metile/graph/fusion/cost_model.h"
#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/fusion/fusion_rules.h"
#include "metile/graph/graph_builder.h"

namespace metile::graph {
namespace {

// A random DAG over square f32 tensors mixing every op class. Outputs: every result nobody
// reads, plus some that are read, so that intermediates escape.
Graph random_graph(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  const int64_t n = int64_t{64} << pick(3);
  GraphBuilder b;
  std::vector<Value> pool{b.input("x", TensorSpec({n, n}, "f32")),
                          b.input("y", TensorSpec({n, n}, "f32"))};
  Value weight = b.input("w", TensorSpec({n}, "f32"));
  std::set<int> used;
  int steps = 6 + pick(14);
  for (int i = 0; i < steps; ++i) {
    Value a = pool[pool.size() - 1 - pick(std::min<int>(4, static_cast<int>(pool.size())))];
    Value c = pool[pick(static_cast<int>(pool.size()))];
    used.insert(a.id);
    Value r;
    switch (pick(11)) {
      case 0:
        r = b.add(a, c), used.insert(c.id);
        break;
      case 1:
        r = b.multiply(a, c), used.insert(c.id);
        break;
      case 2:
        r = b.exp(a);
        break;
      case 3:
        r = b.scale(a, 0.5);
        break;
      case 4:
        r = b.silu(a);
        break;
      case 5:
        r = b.rms_norm(a, weight, 1e-5);
        break;
      case 6:
        r = b.softmax(a, pick(2));
        break;
      case 7:
        r = b.subtract(a, b.max(a, pick(2), /*keepdims=*/true));
        break;
      case 8:
        r = b.matmul(a, c), used.insert(c.id);
        break;
      case 9:
        r = b.transpose(a);
        break;
      default:
        r = b.causal_mask(a);
        break;
    }
    pool.push_back(r);
  }
  std::vector<Value> outputs;
  for (size_t i = 2; i < pool.size(); ++i)
    if (!used.count(pool[i].id) || pick(5) == 0) outputs.push_back(pool[i]);
  return b.build(outputs);
}

void check_plan(const FusionPlan& plan, const target::Target& target) {
  const Graph& g = plan.graph;  // after discovery's rewrites
  Reachability reach(g);
  CostModel cost(target);
  std::vector<int> covered(g.ops().size(), 0);
  for (const FusedRegion& r : plan.regions) {
    ASSERT_FALSE(r.op_ids.empty());
    EXPECT_TRUE(std::is_sorted(r.op_ids.begin(), r.op_ids.end()));
    for (int o : r.op_ids) ++covered[o];
    // A pattern rule's region breaks the pairwise rules by design and has its own estimate.
    bool by_rule = r.rule == "parallel_epilogue";
    if (!by_rule) {
      EXPECT_EQ(region_violation(g, reach, r.op_ids), std::nullopt) << plan.explain();
    }
    if (r.op_ids.size() > 1) {
      OpResources demand =
          by_rule ? plan.candidates[r.candidate].resources : cost.region_resources(g, r.op_ids);
      EXPECT_EQ(cost.resource_violation(demand), std::nullopt);
      EXPECT_GT(r.benefit_ns, 0);
    }
    // Outputs are exactly the results used outside the region or listed as graph outputs.
    std::vector<int> expected;
    for (int o : r.op_ids) {
      bool escapes = g.is_output(g.op(o).output);
      for (int c : g.consumers(o)) escapes |= plan.region_of_op[c] != r.id;
      if (escapes) expected.push_back(g.op(o).output);
    }
    EXPECT_EQ(r.outputs, expected);
    EXPECT_FALSE(r.outputs.empty());
  }
  for (int count : covered) EXPECT_EQ(count, 1);
  for (const Op& op : g.ops())
    for (int c : g.consumers(op.id)) EXPECT_LE(plan.region_of_op[op.id], plan.region_of_op[c]);
  // Selected components never overlap and name a path.
  for (const ConflictComponent& comp : plan.components)
    for (int c : comp.selected) EXPECT_TRUE(plan.candidate_reasons[c].empty());
}

TEST(FusionProperties, RandomGraphsGiveLegalCompleteDeterministicPlans) {
  int fused = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g = random_graph(seed);
    for (const char* name : {"host", "sm90"}) {
      const target::Target& target = target::target_by_name(name);
      FusionPlan plan = plan_graph_fusion(g, target);
      check_plan(plan, target);
      EXPECT_EQ(plan.explain(), plan_graph_fusion(g, target).explain());
      fused += plan.launches_saved() > 0;
    }
  }
  EXPECT_GT(fused, 300);  // most generated graphs have something to fuse
}

TEST(FusionProperties, TightTargetsStillGiveLegalPlans) {
  target::Target tight = target::default_target();
  tight.registers_per_thread = 40;
  tight.threadgroup_memory_bytes = 8192;
  for (uint32_t seed = 1; seed <= 100; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Graph g = random_graph(seed);
    check_plan(plan_graph_fusion(g, tight), tight);
  }
}

// Attention feeding a SwiGLU block, with random masks, axes, escapes and epilogues: the
// rewrites and the rule's regions still give legal, complete plans.
TEST(FusionProperties, DiscoveredBlocksGiveLegalPlans) {
  int rewritten = 0, by_rule = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    auto coin = [&] { return rng() % 2 == 0; };
    GraphBuilder b;
    Value q = b.input("q", TensorSpec({128, 64}, "f16"));
    Value kt = b.input("kt", TensorSpec({64, 128}, "f16"));
    Value v = b.input("v", TensorSpec({128, 64}, "f16"));
    Value wg = b.input("wg", TensorSpec({64, 256}, "f16"));
    Value wu = b.input("wu", TensorSpec({64, 256}, "f16"));
    Value wd = b.input("wd", TensorSpec({256, 64}, "f16"));
    Value scores = b.scale(b.matmul(q, kt), 0.125);
    if (coin()) scores = b.causal_mask(scores);
    Value p = b.softmax(scores, coin() ? -1 : 0);
    Value x = b.matmul(p, v);
    Value gate = b.matmul(x, wg);
    Value up = b.matmul(x, wu);
    Value hidden = coin() ? b.multiply(b.silu(gate), up) : b.multiply(up, b.silu(gate));
    Value y = b.matmul(hidden, wd);
    if (coin()) y = b.add(y, x);
    std::vector<Value> outputs{y};
    if (rng() % 4 == 0) outputs.push_back(p);
    if (rng() % 4 == 0) outputs.push_back(gate);
    Graph g = b.build(outputs);
    for (const char* name : {"host", "sm90"}) {
      const target::Target& target = target::target_by_name(name);
      FusionPlan plan = plan_graph_fusion(g, target);
      check_plan(plan, target);
      EXPECT_EQ(plan.rewrites.size() + plan.rejected_rewrites.size(), 1u);
      rewritten += !plan.rewrites.empty();
      for (const FusedRegion& r : plan.regions) by_rule += r.rule == "parallel_epilogue";
    }
  }
  EXPECT_GT(rewritten, 0);
  EXPECT_GT(by_rule, 0);
}

}  // namespace
}  // namespace metile::graph
