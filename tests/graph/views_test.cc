// plan_views: which transposes, reshapes and slices are read in place, and with which strides.
#include <gtest/gtest.h>

#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/graph_builder.h"
#include "metile/graph/run/views.h"

namespace metile::graph {
namespace {

TEST(Views, StridedReadersGetViewsOthersGetCopies) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({6, 8}, "f32"));
  Value w = b.input("w", TensorSpec({5, 8}, "f32"));
  Value wt = b.transpose(w);                   // read by a matmul: a view
  Value y = b.matmul(x, wt);                   // (6, 5)
  Value heads = b.reshape(x, {6, 2, 4});       // contiguous: a view
  Value swapped = b.transpose(heads, 0, 1);    // read by a reshape: a view
  Value merged = b.reshape(swapped, {2, 24});  // of a strided view: copied
  Value shifted =
      b.add(b.transpose(y), b.slice(b.transpose(x), 0, 0, 5));  // read by an add: copied
  Graph g = b.build({merged, shifted});
  ViewPlan plan = plan_views(g);
  EXPECT_EQ(plan.views.at(wt.id).str(g), "%w, offset 0, strides (1, 8)");
  EXPECT_EQ(plan.views.at(heads.id).str(g), "%x, offset 0, strides (8, 4, 1)");
  EXPECT_EQ(plan.views.at(swapped.id).str(g), "%x, offset 0, strides (4, 8, 1)");
  EXPECT_FALSE(plan.is_view(merged.id));
  EXPECT_FALSE(plan.is_view(g.op(g.value(shifted.id).producer).inputs[0]));
  EXPECT_FALSE(plan.is_view(g.op(g.value(shifted.id).producer).inputs[1]));
  EXPECT_EQ(source_view(g, plan, g.value(merged.id).producer).str(g),
            "%x, offset 0, strides (4, 8, 1)");
}

TEST(Views, AttentionWritesTheHeadsMergeInPlace) {
  GraphBuilder b;
  Value q = b.input("q", TensorSpec({2, 3, 16, 8}, "f32"));
  Value k = b.input("k", TensorSpec({2, 1, 16, 8}, "f32"));
  Value v = b.input("v", TensorSpec({2, 1, 16, 8}, "f32"));
  Value p = b.softmax(b.scale(b.matmul(q, b.transpose(k)), 0.25));
  Value attn = b.matmul(p, v);  // (2, 3, 16, 8)
  Value merged = b.reshape(b.transpose(b.transpose(attn, 1, 2), 0, 1), {16, 48});
  FusionPlan fused = plan_graph_fusion(b.build({merged}));
  ASSERT_EQ(fused.rewrites.size(), 1u);
  const Graph& g = fused.graph;
  ViewPlan plan = plan_views(g);
  int attention = -1, reshape = -1;
  for (const Op& op : g.ops()) {
    if (op.kind == OpKind::FlashAttention) attention = op.id;
    if (op.kind == OpKind::Reshape) reshape = op.id;
  }
  ASSERT_GE(attention, 0);
  // (kv, group, T, D) written into (T, kv, group, D): strides (group D, D, kv group D, 1).
  EXPECT_EQ(plan.views.at(g.op(attention).output).str(g),
            g.value(g.op(reshape).output).ref() + ", offset 0, strides (24, 8, 48, 1)");
  EXPECT_TRUE(plan.view_ops.count(reshape));
  EXPECT_FALSE(plan.is_view(g.op(reshape).output));
}

}  // namespace
}  // namespace metile::graph
