// plan_graph_fusion on small graphs whose best plan is known.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/fusion/fusion_rules.h"
#include "metile/graph/graph_builder.h"

namespace metile::graph {
namespace {

using Json = nlohmann::json;
using Names = std::vector<std::string>;

std::vector<Names> region_ops(const FusionPlan& plan) {
  std::vector<Names> out;
  for (const FusedRegion& r : plan.regions) out.push_back(r.ops);
  return out;
}

// Every op in exactly one region, every region legal, regions in dependency order.
void expect_valid(const Graph& g, const FusionPlan& plan) {
  Reachability reach(g);
  std::vector<int> seen(g.ops().size(), 0);
  for (const FusedRegion& r : plan.regions) {
    for (int o : r.op_ids) {
      ++seen[o];
      EXPECT_EQ(plan.region_of_op[o], r.id);
    }
    EXPECT_EQ(region_violation(g, reach, r.op_ids), std::nullopt) << plan.explain();
  }
  for (int count : seen) EXPECT_EQ(count, 1);
  for (const Op& op : g.ops())
    for (int c : g.consumers(op.id)) EXPECT_LE(plan.region_of_op[op.id], plan.region_of_op[c]);
}

TEST(FusionPlan, SeedExampleIsOneKernelWithTwoOutputs) {
  GraphBuilder b;
  Value values = b.input("values", TensorSpec({1, 2048}, "f16"));
  Value residual = b.input("residual", TensorSpec({1, 2048}, "f16"));
  Value weight = b.input("weight", TensorSpec({2048}, "f16"));
  Value summed = b.add(values, residual);
  Value normalized = b.rms_norm(summed, weight, 1e-5);
  Graph g = b.build({summed, normalized});

  FusionPlan plan = plan_graph_fusion(g);
  ASSERT_EQ(plan.regions.size(), 1u);
  const FusedRegion& r = plan.regions[0];
  EXPECT_EQ(r.ops, (Names{"add", "rms_norm"}));
  EXPECT_EQ(r.outputs, (std::vector<int>{summed.id, normalized.id}));
  EXPECT_EQ(r.inputs, (std::vector<int>{values.id, residual.id, weight.id}));
  EXPECT_EQ(r.launches_saved, 1);
  // `summed` is written anyway (a graph output); fusing saves reading it back: 2048 f16.
  EXPECT_EQ(r.bytes_saved, 4096);
  expect_valid(g, plan);

  Json report = Json::parse(plan.explain());
  EXPECT_EQ(report["target"], "host");
  EXPECT_EQ(report["summary"]["kernels"], 1);
  EXPECT_EQ(report["regions"][0]["ops"], Json({"add", "rms_norm"}));
  EXPECT_EQ(report["regions"][0]["outputs"], Json({"%3", "%4"}));
  EXPECT_EQ(report["components"][0]["path"], "exact-min-cut");
  EXPECT_EQ(report["candidates"][0]["anchor"], "%4 = rms_norm");
}

TEST(FusionPlan, ChainFusesIntoOneRegion) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({1, 2048}, "f16"));
  Value y = b.input("y", TensorSpec({1, 2048}, "f16"));
  Value out = b.scale(b.exp(b.add(x, y)), 0.5);
  Graph g = b.build({out});
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_EQ(region_ops(plan), (std::vector<Names>{{"add", "exp", "scale"}}));
  EXPECT_EQ(plan.regions[0].outputs, std::vector<int>{out.id});
  EXPECT_EQ(plan.regions[0].launches_saved, 2);
  EXPECT_EQ(plan.regions[0].bytes_saved, 4 * 4096);  // two intermediates, each written and read
  // The nested candidate {add, exp} is dominated by the whole chain.
  Json report = Json::parse(plan.explain());
  EXPECT_EQ(report["rejected"][0]["reason"].get<std::string>().rfind("dominated by candidate 1", 0),
            0u);
  expect_valid(g, plan);
}

TEST(FusionPlan, DiamondFusesIntoOneRegion) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({4, 256}, "f32"));
  Value e = b.exp(x);
  Value left = b.silu(e);
  Value right = b.scale(e, 3.0);
  Value out = b.add(left, right);
  Graph g = b.build({out});
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_EQ(region_ops(plan), (std::vector<Names>{{"exp", "silu", "scale", "add"}}));
  EXPECT_EQ(plan.regions[0].outputs, std::vector<int>{out.id});
  expect_valid(g, plan);
}

TEST(FusionPlan, EscapingIntermediateBecomesAnExtraOutput) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({1, 2048}, "f16"));
  Value y = b.input("y", TensorSpec({1, 2048}, "f16"));
  Value e = b.exp(b.add(x, y));
  Value out = b.scale(e, 0.5);
  Graph g = b.build({out, e});
  FusionPlan plan = plan_graph_fusion(g);
  ASSERT_EQ(plan.regions.size(), 1u);
  EXPECT_EQ(plan.regions[0].outputs, (std::vector<int>{e.id, out.id}));
  // add's result is private (written and read: 8192); exp's is only no longer read back.
  EXPECT_EQ(plan.regions[0].bytes_saved, 8192 + 4096);
  expect_valid(g, plan);
}

TEST(FusionPlan, MatmulTakesAnElementwiseEpilogueButNoPrologue) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({64, 128}, "f16"));
  Value w = b.input("w", TensorSpec({128, 256}, "f16"));
  Value bias = b.input("bias", TensorSpec({256}, "f16"));
  Value out = b.silu(b.add(b.matmul(b.exp(x), w), bias));
  Graph g = b.build({out});
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_EQ(region_ops(plan), (std::vector<Names>{{"exp"}, {"matmul", "add", "silu"}}));
  Json report = Json::parse(plan.explain());
  bool explained = false;
  for (const Json& c : report["candidates"])
    for (const Json& e : c["excluded"])
      explained |=
          e["reason"] == "legality: matmul does not fuse its producers (%3 = exp and %4 = matmul)";
  EXPECT_TRUE(explained) << plan.explain();
  expect_valid(g, plan);
}

TEST(FusionPlan, GatedEpilogueSharesOneKernelAndTransposeStaysAlone) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({1, 512}, "f16"));
  Value gate = b.input("gate", TensorSpec({512, 1024}, "f16"));
  Value up = b.input("up", TensorSpec({512, 1024}, "f16"));
  Value activated = b.silu(b.matmul(x, gate));
  Value hidden = b.multiply(activated, b.matmul(x, up));
  Value flipped = b.transpose(hidden);
  Graph g = b.build({flipped});
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_EQ(region_ops(plan),
            (std::vector<Names>{{"matmul", "silu", "matmul", "multiply"}, {"transpose"}}));
  expect_valid(g, plan);
}

TEST(FusionPlan, RowAndTileDomainsNeverShareAKernel) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({64, 128}, "f32"));
  Value w = b.input("w", TensorSpec({128, 256}, "f32"));
  Value y = b.input("y", TensorSpec({64, 256}, "f32"));
  Value nw = b.input("nw", TensorSpec({256}, "f32"));
  Value projected = b.matmul(x, w);
  Value out = b.add(projected, b.rms_norm(y, nw, 1e-6));
  Graph g = b.build({out});
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_EQ(plan.regions.size(), 2u);
  Json report = Json::parse(plan.explain());
  bool clash = false;
  for (const Json& r : report["rejected"])
    clash |= r["reason"].get<std::string>().find("cannot share a kernel") != std::string::npos;
  EXPECT_TRUE(clash) << plan.explain();
  expect_valid(g, plan);
}

TEST(FusionPlan, ReductionsOverDifferentRowsStaySeparate) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({32, 64}, "f32"));
  Value out = b.sum(b.exp(b.softmax(x, 0)), 1);
  Graph g = b.build({out});
  FusionPlan plan = plan_graph_fusion(g);
  // softmax reduces axis 0, sum axis 1: exp joins one of them, never both.
  ASSERT_EQ(plan.regions.size(), 2u);
  EXPECT_NE(plan.region_of_op[0], plan.region_of_op[2]);
  expect_valid(g, plan);
}

TEST(FusionPlan, ResourceLimitKeepsProducersSeparateAndSaysWhy) {
  GraphBuilder b;
  Value values = b.input("values", TensorSpec({1, 2048}, "f16"));
  Value residual = b.input("residual", TensorSpec({1, 2048}, "f16"));
  Value weight = b.input("weight", TensorSpec({2048}, "f16"));
  Value summed = b.add(values, residual);
  Graph g = b.build({summed, b.rms_norm(summed, weight, 1e-5)});
  target::Target tight = target::default_target();
  tight.registers_per_thread = 24;  // base 16 + add 2 + rms_norm (8 row + 1) = 27
  FusionPlan plan = plan_graph_fusion(g, tight);
  EXPECT_EQ(region_ops(plan), (std::vector<Names>{{"add"}, {"rms_norm"}}));
  Json report = Json::parse(plan.explain());
  ASSERT_EQ(report["rejected"].size(), 1u) << plan.explain();
  EXPECT_EQ(report["rejected"][0]["reason"], "resource limit: needs 27 registers > 24");
  expect_valid(g, plan);
}

TEST(FusionPlan, ExactSelectionPicksTwoOuterRegionsOverTheMiddle) {
  // p and q are large and shared: {p, sum, scale} and {q, sum, scale} each save one big read
  // plus a small kernel; add(p, q) saves two big reads, more than either outer region but
  // less than both. Greedy would take the middle; the exact min cut takes the two outer.
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({64, 4096}, "f32"));
  Value y = b.input("y", TensorSpec({64, 4096}, "f32"));
  Value p = b.exp(x);
  Value q = b.exp(y);
  Value left = b.scale(b.sum(p, 1), 2.0);
  Value middle = b.add(p, q);
  Value right = b.scale(b.sum(q, 1), 2.0);
  Graph g = b.build({left, middle, right});
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_EQ(region_ops(plan),
            (std::vector<Names>{{"exp", "sum", "scale"}, {"exp", "sum", "scale"}, {"add"}}));
  Json report = Json::parse(plan.explain());
  ASSERT_EQ(report["components"].size(), 1u) << plan.explain();
  EXPECT_EQ(report["components"][0]["path"], "exact-min-cut");
  EXPECT_EQ(report["components"][0]["candidates"].size(), 3u);
  bool middle_lost = false;
  for (const Json& r : report["rejected"])
    middle_lost |= r["ops"] == Json({"%2 = exp", "%3 = exp", "%6 = add"}) &&
                   r["reason"].get<std::string>().find("larger total benefit") != std::string::npos;
  EXPECT_TRUE(middle_lost) << plan.explain();
  expect_valid(g, plan);
}

// With producer cones one edge deep, two convex regions can each need the other's result.
TEST(FusionPlan, MutuallyDependentRegionsConflict) {
  GraphBuilder b;
  Value a = b.exp(b.input("x", TensorSpec({256}, "f32")));
  Value c = b.exp(b.input("y", TensorSpec({256}, "f32")));
  Value from_a = b.exp(a);
  Value from_c = b.exp(c);
  Value left = b.add(a, from_c);   // {a, from_c, left} reads c
  Value right = b.add(c, from_a);  // {c, from_a, right} reads a
  Graph g = b.build({left, right});
  FusionOptions shallow;
  shallow.neighbourhood.max_depth = 1;
  FusionPlan plan = plan_graph_fusion(g, target::default_target(), shallow);
  EXPECT_NE(plan.explain().find("(kernel dependency cycle)"), std::string::npos) << plan.explain();
  expect_valid(g, plan);
}

// Three regions in a ring (each reads one result of the next) are pairwise independent, so
// selection may pick all three; the plan then gives up the least valuable one.
TEST(FusionPlan, RingOfRegionsIsBrokenAfterSelection) {
  GraphBuilder b;
  std::vector<Value> y, x;
  for (const char* name : {"i1", "i2", "i3"})
    y.push_back(b.exp(b.input(name, TensorSpec({256}, "f32"))));
  for (int i = 0; i < 3; ++i) x.push_back(b.scale(y[(i + 2) % 3], 2.0));
  std::vector<Value> outs;
  for (int i = 0; i < 3; ++i) outs.push_back(b.add(y[i], x[i]));
  Graph g = b.build(outs);
  FusionOptions shallow;
  shallow.neighbourhood.max_depth = 1;
  FusionPlan plan = plan_graph_fusion(g, target::default_target(), shallow);
  EXPECT_NE(plan.explain().find("dropped after selection: with the other selected regions its "
                                "kernel closes a dependency cycle"),
            std::string::npos)
      << plan.explain();
  int three_op_regions = 0;
  for (const FusedRegion& r : plan.regions) three_op_regions += r.ops.size() == 3;
  EXPECT_EQ(three_op_regions, 2);
  expect_valid(g, plan);
}

TEST(FusionPlan, PlanningTwiceGivesTheSameReport) {
  auto build = [] {
    GraphBuilder b;
    Value x = b.input("x", TensorSpec({8, 512}, "f16"));
    Value w = b.input("w", TensorSpec({512, 512}, "f16"));
    Value n = b.input("n", TensorSpec({512}, "f16"));
    Value projected = b.matmul(x, w);
    Value h = b.rms_norm(b.add(x, projected), n, 1e-5);
    Value scores = b.matmul(h, b.transpose(h));
    Value s = b.softmax(b.causal_mask(b.scale(scores, 0.125)), -1);
    return b.build({s, h});
  };
  Graph g = build();
  std::string first = plan_graph_fusion(g).explain();
  EXPECT_EQ(first, plan_graph_fusion(g).explain());
  EXPECT_EQ(first, plan_graph_fusion(build()).explain());
  expect_valid(g, plan_graph_fusion(g));
}

}  // namespace
}  // namespace metile::graph
