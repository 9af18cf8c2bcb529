// Graph-level discovery: the attention chain becomes flash_attention only under a verified
// weighted-softmax certificate; every case it cannot prove keeps the graph, with the reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/graph_builder.h"
#include "metile/support/errors.h"

namespace metile::graph {
namespace {

using Json = nlohmann::json;

struct Attention {
  int64_t batch = 2, queries = 128, keys = 128, head = 64;
  int64_t kt_batch = 2;
  bool causal = false;
  int softmax_axis = -1;
  bool probabilities_out = false;  // the softmax result is also a graph output
  bool scores_read = false;        // exp reads the scaled scores too

  Graph build() const {
    GraphBuilder b;
    Value q = b.input("q", TensorSpec({batch, queries, head}, "f16"));
    Value kt = b.input("kt", TensorSpec({kt_batch, head, keys}, "f16"));
    Value v = b.input("v", TensorSpec({batch, keys, head}, "f16"));
    Value scaled = b.scale(b.matmul(q, kt), 0.125);
    Value masked = causal ? b.causal_mask(scaled) : scaled;
    Value p = b.softmax(masked, softmax_axis);
    Value out = b.matmul(p, v);
    std::vector<Value> outputs{out};
    if (probabilities_out) outputs.push_back(p);
    if (scores_read) outputs.push_back(b.exp(scaled));
    return b.build(outputs);
  }
};

std::string rejection(const FusionPlan& plan) {
  EXPECT_TRUE(plan.rewrites.empty());
  EXPECT_EQ(plan.rejected_rewrites.size(), 1u);
  return plan.rejected_rewrites.empty() ? "" : plan.rejected_rewrites[0].reason;
}

TEST(AttentionDiscovery, RewritesTheChainUnderTheWeightedSoftmaxCertificate) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "unmasked");
    Attention a;
    a.causal = causal;
    Graph g = a.build();
    FusionPlan plan = plan_graph_fusion(g);
    ASSERT_EQ(plan.rewrites.size(), 1u) << plan.explain();
    const AttentionRewrite& rw = plan.rewrites[0];
    EXPECT_EQ(rw.replaced.size(), causal ? 5u : 4u);
    EXPECT_EQ(rw.causal, causal);
    EXPECT_EQ(rw.scale, 0.125);
    EXPECT_EQ(rw.certificate.law, "weighted_softmax");
    EXPECT_EQ(rw.certificate.obligations.size(), 5u);
    // Each intermediate (2 x 128 x 128 f16) is no longer written and read back.
    int64_t intermediates = causal ? 3 : 2;
    EXPECT_EQ(rw.bytes_saved, (intermediates + 1) * 2 * (2 * 128 * 128 * 2));
    EXPECT_EQ(rw.launches_saved, causal ? 4 : 3);

    // The planned graph holds the node with the certificate; the input graph is unchanged.
    ASSERT_EQ(plan.graph.ops().size(), 1u);
    const Op& node = plan.graph.op(0);
    EXPECT_EQ(node.kind, OpKind::FlashAttention);
    EXPECT_EQ(node.int_attr("causal"), causal);
    EXPECT_EQ(plan.graph.certificates().at(node.int_attr("certificate")).law, "weighted_softmax");
    EXPECT_EQ(plan.graph.spec(plan.graph.outputs()[0]), TensorSpec({2, 128, 64}, "f16"));
    EXPECT_EQ(g.ops().size(), causal ? 5u : 4u);

    ASSERT_EQ(plan.regions.size(), 1u);
    EXPECT_EQ(plan.regions[0].rule, "flash_attention");
    EXPECT_EQ(plan.regions[0].bytes_saved, rw.bytes_saved);
    EXPECT_EQ(plan.launches_saved(), rw.launches_saved);

    Json report = Json::parse(plan.explain());
    const Json& law = report["discovery"]["laws"][0];
    EXPECT_EQ(law["law"], "weighted_softmax");
    EXPECT_EQ(law["obligations"].size(), 5u);
    EXPECT_EQ(law["obligations"][2]["obligation"], "associativity");
    EXPECT_EQ(law["obligations"][2]["method"], "cases");
    EXPECT_EQ(law["obligations"][2]["cases"], 8000);
    EXPECT_EQ(report["discovery"]["rewrites"][0]["node"], "%3 = flash_attention");
  }
}

TEST(AttentionDiscovery, APlannedGraphPlansAgainUnchanged) {
  Attention a;
  a.causal = true;
  FusionPlan first = plan_graph_fusion(a.build());
  FusionPlan again = plan_graph_fusion(first.graph);
  EXPECT_EQ(again.graph.str(), first.graph.str());
  EXPECT_TRUE(again.rewrites.empty());
  EXPECT_EQ(again.graph.certificates().size(), 1u);
  EXPECT_EQ(again.regions.size(), 1u);
}

TEST(AttentionDiscovery, EscapingIntermediatesKeepTheGraph) {
  Attention a;
  a.probabilities_out = true;
  FusionPlan plan = plan_graph_fusion(a.build());
  EXPECT_EQ(rejection(plan), "escaping intermediate: %5 = softmax is a graph output");
  EXPECT_EQ(plan.graph.str(), a.build().str());

  Attention b;
  b.scores_read = true;
  EXPECT_EQ(rejection(plan_graph_fusion(b.build())),
            "escaping intermediate: %4 = scale is also read by %7 = exp");
}

TEST(AttentionDiscovery, IncompatibleShapesKeepTheGraph) {
  Attention a;
  a.kt_batch = 1;  // the keys broadcast over the batch, the values do not
  EXPECT_EQ(rejection(plan_graph_fusion(a.build())),
            "incompatible shapes: q (2, 128, 64), kt (1, 64, 128), v (2, 128, 64) must have one "
            "rank, and kt and v one batch shape whose every dimension is q's or 1 (grouped-query "
            "heads)");
}

TEST(AttentionDiscovery, AnotherReductionAxisKeepsTheGraph) {
  Attention a;
  a.softmax_axis = 1;
  EXPECT_EQ(rejection(plan_graph_fusion(a.build())),
            "unsupported reduction axis: softmax over axis 1 of (2, 128, 128); flash attention "
            "reduces the key axis (2)");
}

TEST(AttentionDiscovery, AFailedObligationKeepsTheGraph) {
  FusionOptions options;
  discovery::ReductionLaw& law = options.discovery.attention_law;
  law.merge[1] = discovery::Expr::var("a.d") + discovery::Expr::var("b.d");  // no rescaling
  Graph g = Attention{}.build();
  FusionPlan plan = plan_graph_fusion(g, target::default_target(), options);
  std::string why = rejection(plan);
  EXPECT_EQ(why.rfind("failed obligation: reduction law 'weighted_softmax' fails "
                      "pair_homomorphism",
                      0),
            0u)
      << why;
  EXPECT_EQ(plan.graph.str(), g.str());
  Json report = Json::parse(plan.explain());
  EXPECT_EQ(report["rejected"].back()["stage"], "discovery");
  EXPECT_EQ(report["rejected"].back()["reason"], why);
}

TEST(AttentionDiscovery, TheLawMustDescribeTheChain) {
  FusionOptions options;
  options.discovery.attention_law = discovery::laws::log_sum_exp();
  EXPECT_EQ(rejection(plan_graph_fusion(Attention{}.build(), target::default_target(), options)),
            "law 'log_sum_exp' does not describe softmax(scores) @ values: it needs two element "
            "components (score, value) and one result");

  options.discovery.attention_law = discovery::laws::weighted_softmax();
  options.discovery.attention_law.element[0].domain = discovery::Domain::Finite;
  Attention causal;
  causal.causal = true;
  EXPECT_EQ(rejection(plan_graph_fusion(causal.build(), target::default_target(), options)),
            "law 'weighted_softmax' admits finite scores only; the causal mask makes -inf ones");
}

TEST(AttentionDiscovery, TheNodeMustFitTheTarget) {
  Attention a;
  a.head = 256;  // a 64 x 256 f32 output accumulator over 128 threads: 128 registers alone
  std::string why = rejection(plan_graph_fusion(a.build()));
  EXPECT_EQ(why, "resource limit: the flash_attention kernel needs 146 registers > 128");
  EXPECT_EQ(plan_graph_fusion(a.build(), target::target_by_name("sm90")).rewrites.size(), 1u);
}

// The threadgroup-memory estimate is what the kernel stages on the target (attention_tiles.h):
// head dimension 128 in f16 takes one 128 x 64 K tile and one 64 x 128 V tile on the host
// (32 KB, its limit) and a two-slot prefetch ring of both on sm90 (64 KB of 227); f32's bound
// (twice its 64 KB of tiles) is beyond the host's 32 KB.
TEST(AttentionDiscovery, HeadDim128FitsWhereTheKernelsTilesDo) {
  Attention a;
  a.head = 128;
  a.causal = true;
  EXPECT_EQ(plan_graph_fusion(a.build()).rewrites.size(), 1u);
  EXPECT_EQ(plan_graph_fusion(a.build(), target::target_by_name("sm90")).rewrites.size(), 1u);
  GraphBuilder b;
  Value q = b.input("q", TensorSpec({2, 128, 128}, "f32"));
  Value kt = b.input("kt", TensorSpec({2, 128, 128}, "f32"));
  Value v = b.input("v", TensorSpec({2, 128, 128}, "f32"));
  Graph f32 = b.build({b.matmul(b.softmax(b.scale(b.matmul(q, kt), 0.125)), v)});
  EXPECT_EQ(rejection(plan_graph_fusion(f32)),
            "resource limit: the flash_attention kernel needs 131072 threadgroup bytes > 32768");
  EXPECT_EQ(plan_graph_fusion(f32, target::target_by_name("sm90")).rewrites.size(), 1u);
}

TEST(AttentionDiscovery, NonAttentionSoftmaxIsNotReported) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({64, 64}, "f32"));
  Value w = b.input("w", TensorSpec({64, 64}, "f32"));
  Graph g = b.build({b.matmul(b.softmax(x), w)});  // no score matmul before the softmax
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_TRUE(plan.rewrites.empty());
  EXPECT_TRUE(plan.rejected_rewrites.empty());
}

TEST(AttentionDiscovery, FlashAttentionNeedsACompleteCertificate) {
  GraphBuilder b;
  Value q = b.input("q", TensorSpec({128, 64}, "f16"));
  Value kt = b.input("kt", TensorSpec({64, 128}, "f16"));
  Value v = b.input("v", TensorSpec({128, 64}, "f16"));
  try {
    b.flash_attention(q, kt, v, 1.0, false, discovery::Certificate{"weighted_softmax", {}, {}});
    FAIL() << "accepted an empty certificate";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(),
                 "flash_attention: the certificate of law 'weighted_softmax' does not discharge "
                 "every obligation, in %3 = flash_attention(%q, %kt, %v)");
  }
}

}  // namespace
}  // namespace metile::graph
