// The legality rules, the cost model and the per-neighbourhood s-t cuts, one piece at a time.
#include <gtest/gtest.h>

#include "metile/graph/fusion/cost_model.h"
#include "metile/graph/fusion/fusion_rules.h"
#include "metile/graph/fusion/neighbourhood.h"
#include "metile/graph/graph_builder.h"

namespace metile::graph {
namespace {

int op_of(const Graph& g, Value v) {
  return g.value(v.id).producer;
}

TEST(FusionRules, PathRules) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({64, 128}, "f32"));
  Value w = b.input("w", TensorSpec({128, 128}, "f32"));
  Value e = b.exp(x);
  Value mm = b.matmul(e, w);
  Value epilogue = b.silu(mm);
  Value row = b.softmax(epilogue, 1);
  Value col = b.sum(row, 0, /*keepdims=*/true);
  Value t = b.transpose(col);
  Value reduced = b.max(x, 1, /*keepdims=*/true);
  Value centred = b.subtract(x, reduced);
  Graph g = b.build({t, centred});
  auto violation = [&](Value up, Value down) {
    return path_violation(g, op_of(g, up), op_of(g, down));
  };

  EXPECT_EQ(violation(e, mm), "matmul does not fuse its producers (%2 = exp and %3 = matmul)");
  EXPECT_EQ(violation(mm, epilogue), std::nullopt);
  EXPECT_EQ(violation(mm, row),
            "a matmul epilogue is elementwise over the output tile (64, 128) (%3 = matmul and "
            "%5 = softmax)");
  EXPECT_EQ(violation(epilogue, row), std::nullopt);
  EXPECT_EQ(violation(row, col),
            "reductions over different rows (row (64, 128) axis 1 vs row (64, 128) axis 0) need "
            "separate kernels (%5 = softmax and %6 = sum)");
  EXPECT_EQ(violation(col, t), "transpose is a region boundary (%6 = sum and %7 = transpose)");
  EXPECT_EQ(violation(reduced, centred), std::nullopt);  // uses the row again: legal

  EXPECT_EQ(fusion_domain(g, op_of(g, row)).str(), "row (64, 128) axis 1");
  EXPECT_EQ(fusion_domain(g, op_of(g, mm)).str(), "tile (64, 128)");
  EXPECT_TRUE(domains_compatible(fusion_domain(g, op_of(g, e)), fusion_domain(g, op_of(g, mm))));
  EXPECT_FALSE(domains_compatible(fusion_domain(g, op_of(g, row)), fusion_domain(g, op_of(g, mm))));
}

TEST(FusionRules, RegionViolationCatchesNonConvexRegions) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({16}, "f32"));
  Value a = b.exp(x);
  Value mid = b.silu(a);
  Value c = b.add(a, mid);
  Graph g = b.build({c});
  Reachability reach(g);
  EXPECT_TRUE(reach.reaches(op_of(g, a), op_of(g, c)));
  EXPECT_FALSE(reach.reaches(op_of(g, c), op_of(g, a)));
  EXPECT_EQ(region_violation(g, reach, {op_of(g, a), op_of(g, c)}), "region is not convex");
  EXPECT_EQ(region_violation(g, reach, {op_of(g, a), op_of(g, mid), op_of(g, c)}), std::nullopt);
}

TEST(CostModel, CostsComeFromTheTarget) {
  CostModel host(target::default_target());
  EXPECT_EQ(host.launch_ns(), 5000);
  EXPECT_EQ(host.transfer_ns(4096), 41);  // 4096 bytes at 100 GB/s
  CostModel sm90(target::target_by_name("sm90"));
  EXPECT_EQ(sm90.launch_ns(), 3000);
  EXPECT_EQ(sm90.transfer_ns(43000), 10);

  GraphBuilder b;
  Value x = b.input("x", TensorSpec({1, 2048}, "f16"));
  Value w = b.input("w", TensorSpec({2048, 64}, "f16"));
  Value norm = b.rms_norm(x, b.input("n", TensorSpec({2048}, "f16")), 1e-5);
  Value soft = b.softmax(x, 1);
  Value mm = b.matmul(x, w);
  Graph g = b.build({norm, soft, mm});
  OpResources r = host.resources(g, op_of(g, norm));
  EXPECT_EQ(r.registers, 2048 / 256 + 1);
  EXPECT_EQ(r.threadgroup_bytes, 8 * 4);  // one partial per SIMD group of the 256 threads
  EXPECT_EQ(host.resources(g, op_of(g, soft)).threadgroup_bytes, 8 * 4 * 2);
  OpResources m = host.resources(g, op_of(g, mm));
  EXPECT_EQ(m.registers, 64 * 64 / 128 + 16);
  EXPECT_EQ(m.threadgroup_bytes, 2 * (64 + 64) * 32 * 2);
  EXPECT_EQ(host.pressure_ns(m), 1250);  // half the scratch: a quarter launch
  EXPECT_EQ(host.resource_violation({129, 0}), "needs 129 registers > 128");
  EXPECT_EQ(host.resource_violation({16, 40000}), "needs 40000 threadgroup bytes > 32768");
  EXPECT_EQ(host.resource_violation({128, 32768}), std::nullopt);
}

TEST(Neighbourhood, SeedExampleNetworkAndBenefit) {
  GraphBuilder b;
  Value values = b.input("values", TensorSpec({1, 2048}, "f16"));
  Value residual = b.input("residual", TensorSpec({1, 2048}, "f16"));
  Value summed = b.add(values, residual);
  Graph g =
      b.build({summed, b.rms_norm(summed, b.input("weight", TensorSpec({2048}, "f16")), 1e-5)});
  CostModel cost(target::default_target());
  CandidateSet set = enumerate_candidate_regions(g, Reachability(g), cost);
  ASSERT_EQ(set.candidates.size(), 1u);
  const CandidateRegion& c = set.candidates[0];
  EXPECT_EQ(c.anchor, 1);
  EXPECT_EQ(c.ops, (std::vector<int>{0, 1}));
  // s -> rms_norm (inf), s -> add (gain), add -> t (pressure), add -> rms_norm (inf).
  EXPECT_EQ(c.network_vertices, 4);
  EXPECT_EQ(c.network_arcs, 4);
  // gain(add) = launch + reading `summed` back (it is a graph output, so written anyway).
  int64_t gain = 5000 + 41, pressure = 39;  // 0.5 * 2/128 of a launch
  EXPECT_EQ(c.benefit_ns, gain - pressure);
  EXPECT_EQ(c.min_cut_ns, pressure);
  EXPECT_EQ(c.bytes_saved, 4096);
  EXPECT_EQ(c.resources.registers, 16 + 2 + 9);
  EXPECT_FALSE(c.solver.empty());
  EXPECT_TRUE(set.rejected.empty());
}

TEST(Neighbourhood, DepthLimitKeepsFarProducersOut) {
  GraphBuilder b;
  Value v = b.input("x", TensorSpec({256}, "f32"));
  for (int i = 0; i < 6; ++i) v = b.exp(v);
  Graph g = b.build({v});
  NeighbourhoodOptions shallow;
  shallow.max_depth = 2;
  CandidateSet set =
      enumerate_candidate_regions(g, Reachability(g), CostModel(target::default_target()), shallow);
  ASSERT_FALSE(set.candidates.empty());
  for (const CandidateRegion& c : set.candidates) EXPECT_LE(c.ops.size(), 3u);
}

}  // namespace
}  // namespace metile::graph
