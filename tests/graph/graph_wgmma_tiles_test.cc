// Graph matmul regions on sm90's wgmma tiles (matmul_tiles.h): a prefill matmul, one with a
// residual epilogue and the SwiGLU region lower through the whole pipeline for sm90 onto wgmma
// (one dot a K loop: wgmma_pipelined; the gate/up stage's two dots: wgmma_staged with its
// prefetch ring), and NVRTC compiles each for sm_90a (skipped, with the reason, without NVRTC);
// decode-sized regions keep the mma.sync tiles.
#include <gtest/gtest.h>

#include "metile/graph/graph_builder.h"
#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"
#include "metile/ir/printer.h"
#include "metile/pipeline.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/target/target.h"

namespace metile::graph {
namespace {

using schedule::MatrixStrategy;

struct Lowered {
  RegionKernel region_kernel;
  PipelineResult result;
};

// Every kernel of every region of `graph`, planned and lowered for sm90, through the pipeline;
// each compiled by NVRTC where it is present.
std::vector<Lowered> lower_for_sm90(const Graph& graph) {
  const target::Target& sm90 = target::target_by_name("sm90");
  FusionPlan plan = plan_graph_fusion(graph, sm90);
  ViewPlan views = plan_views(plan.graph);
  PipelineOptions options;
  options.target = &sm90;
  const runtime::cuda::Nvrtc* nvrtc = runtime::cuda::Nvrtc::shared();
  std::vector<Lowered> lowered;
  for (const FusedRegion& region : plan.regions)
    for (RegionKernel& k : lower_region(plan, views, region, "", sm90)) {
      PipelineResult result = compile_to_source(k.kernel, options);
      if (nvrtc) {
        std::string cubin = nvrtc->compile(result.emitted.source, result.report.kernel,
                                           runtime::cuda::nvrtc_options("sm_90a"),
                                           runtime::cuda::NvrtcOutput::Cubin);
        EXPECT_EQ(cubin.substr(0, 4),
                  "\x7f"
                  "ELF")
            << k.decision;
      }
      lowered.push_back({std::move(k), std::move(result)});
    }
  return lowered;
}

MatrixStrategy strategy(const Lowered& l) {
  return l.result.report.schedule_plan.strategy;
}

bool emits_wgmma(const Lowered& l) {
  return l.result.emitted.source.find("wgmma.mma_async") != std::string::npos;
}

TensorSpec bf16(Shape shape) {
  return TensorSpec(std::move(shape), "bf16");
}

// Ragged M, N and K: 300 tokens, 200 inputs, 500 outputs.
TEST(GraphWgmmaTiles, PrefillMatmulRunsOnTheWgmmaPipeline) {
  GraphBuilder b;
  Value x = b.input("x", bf16({300, 200})), w = b.input("w", bf16({200, 500}));
  std::vector<Lowered> kernels = lower_for_sm90(b.build({b.matmul(x, w)}));
  ASSERT_EQ(kernels.size(), 1u);
  const Lowered& k = kernels[0];
  EXPECT_EQ(strategy(k), MatrixStrategy::WgmmaPipelined)
      << k.result.report.schedule_plan.double_buffer_reason;
  EXPECT_TRUE(emits_wgmma(k));
  EXPECT_EQ(k.region_kernel.grid, (std::array<int64_t, 3>{3, 2, 1}));
  EXPECT_EQ(k.result.report.threads_per_threadgroup[0], 256);
  EXPECT_EQ(k.region_kernel.decision.rfind("wgmma tiles of 128 x 256 over (300, 500), K in steps "
                                           "of 64, 8 warps",
                                           0),
            0u)
      << k.region_kernel.decision;
}

// The residual add is the matmul's epilogue, on wgmma's accumulator registers.
TEST(GraphWgmmaTiles, MatmulWithAResidualEpilogueRunsOnWgmma) {
  GraphBuilder b;
  Value x = b.input("x", bf16({300, 200})), w = b.input("w", bf16({200, 500}));
  Value residual = b.input("residual", bf16({300, 500}));
  std::vector<Lowered> kernels = lower_for_sm90(b.build({b.add(residual, b.matmul(x, w))}));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].region_kernel.op_ids.size(), 2u);
  EXPECT_EQ(strategy(kernels[0]), MatrixStrategy::WgmmaPipelined)
      << kernels[0].result.report.schedule_plan.double_buffer_reason;
  EXPECT_TRUE(emits_wgmma(kernels[0]));
}

// A linear layer's x @ transpose(w): w is read in place through swapped strides (b's
// contiguous axis is K) and the kernel still compiles on wgmma's tiles.
TEST(GraphWgmmaTiles, TransposedWeightIsReadInPlaceOnWgmmaTiles) {
  GraphBuilder b;
  Value x = b.input("x", bf16({300, 200})), w = b.input("w", bf16({500, 200}));
  std::vector<Lowered> kernels = lower_for_sm90(b.build({b.matmul(x, b.transpose(w))}));
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_NE(
      kernels[0].region_kernel.decision.find("read in place as %w, offset 0, strides (1, 200)"),
      std::string::npos)
      << kernels[0].region_kernel.decision;
  EXPECT_TRUE(emits_wgmma(kernels[0]))
      << kernels[0].result.report.schedule_plan.double_buffer_reason;
}

Graph swiglu(int64_t tokens, int64_t hidden, int64_t inter) {
  GraphBuilder b;
  Value x = b.input("x", bf16({tokens, hidden}));
  Value w_gate = b.input("w_gate", bf16({hidden, inter})),
        w_up = b.input("w_up", bf16({hidden, inter}));
  Value w_down = b.input("w_down", bf16({inter, hidden}));
  Value h = b.multiply(b.silu(b.matmul(x, w_gate)), b.matmul(x, w_up));
  return b.build({b.add(x, b.matmul(h, w_down))});
}

// The gate/up stage's two dots share a K loop: both on wgmma_staged, their b tiles prefetched
// a step ahead; the down projection (with the residual) is one dot: wgmma_pipelined.
TEST(GraphWgmmaTiles, SwigluRegionRunsOnWgmma) {
  std::vector<Lowered> kernels = lower_for_sm90(swiglu(300, 256, 704));
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(strategy(kernels[0]), MatrixStrategy::WgmmaStaged)
      << kernels[0].result.report.schedule_plan.double_buffer_reason;
  EXPECT_NE(ir::print(kernels[0].result.metal_ir).find("scratch = \"prefetch\""),
            std::string::npos);
  EXPECT_NE(kernels[0].region_kernel.decision.find("wgmma tiles of 128 x 128"), std::string::npos);
  EXPECT_EQ(strategy(kernels[1]), MatrixStrategy::WgmmaPipelined)
      << kernels[1].result.report.schedule_plan.double_buffer_reason;
  for (const Lowered& k : kernels) EXPECT_TRUE(emits_wgmma(k)) << k.region_kernel.decision;
}

// Decode (16 tokens) keeps the mma.sync tiles, and says why.
TEST(GraphWgmmaTiles, DecodeKeepsTheMmaSyncTiles) {
  std::vector<Lowered> kernels = lower_for_sm90(swiglu(16, 256, 704));
  ASSERT_EQ(kernels.size(), 2u);
  for (const Lowered& k : kernels) {
    EXPECT_FALSE(emits_wgmma(k));
    EXPECT_NE(k.region_kernel.decision.find("tiles of 16 x 64 over (16, "), std::string::npos);
    EXPECT_NE(k.region_kernel.decision.find("M = 16 is decode-sized"), std::string::npos);
  }
}

}  // namespace
}  // namespace metile::graph
