// The kernels of a Llama decoder block graph (bf16, grouped-query heads, rotary, views read in
// place) through the whole pipeline for sm90, and NVRTC's cubin for the H200 from each
// (skipped, with the reason, where NVRTC is absent): the GPU path compiles without a GPU.
#include <gtest/gtest.h>

#include <tuple>

#include "metile/graph/graph_builder.h"
#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"
#include "metile/ir/printer.h"
#include "metile/pipeline.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/target/target.h"

namespace metile::graph {
namespace {

Graph decoder_block(int64_t tokens, int64_t hidden, int64_t heads, int64_t kv_heads,
                    int64_t head_dim, int64_t inter) {
  GraphBuilder b;
  auto in = [&](const char* name, Shape shape) { return b.input(name, TensorSpec(shape, "bf16")); };
  Value x = in("x", {tokens, hidden}), attn_norm = in("attn_norm", {hidden});
  Value wq = in("wq", {hidden, heads * head_dim}), wk = in("wk", {hidden, kv_heads * head_dim});
  Value wv = in("wv", {hidden, kv_heads * head_dim}), wo = in("wo", {heads * head_dim, hidden});
  Value mlp_norm = in("mlp_norm", {hidden}), w_gate = in("w_gate", {hidden, inter});
  Value w_up = in("w_up", {hidden, inter}), w_down = in("w_down", {inter, hidden});
  Value cos = in("cos", {tokens, head_dim / 2}), sin = in("sin", {tokens, head_dim / 2});
  auto heads_first = [&](Value y, int64_t n, int64_t g) {
    y = b.reshape(y, {tokens, n, g, head_dim});
    return b.transpose(b.transpose(y, 0, 1), 1, 2);
  };
  Value h = b.rms_norm(x, attn_norm, 1e-5);
  Value q = b.rotary(heads_first(b.matmul(h, wq), kv_heads, heads / kv_heads), cos, sin);
  Value k = b.rotary(heads_first(b.matmul(h, wk), kv_heads, 1), cos, sin);
  Value v = heads_first(b.matmul(h, wv), kv_heads, 1);
  Value scores =
      b.causal_mask(b.scale(b.matmul(q, b.transpose(k)), 1.0 / std::sqrt(double(head_dim))));
  Value attn = b.matmul(b.softmax(scores), v);
  attn = b.reshape(b.transpose(b.transpose(attn, 1, 2), 0, 1), {tokens, heads * head_dim});
  Value h2 = b.add(x, b.matmul(attn, wo));
  Value n2 = b.rms_norm(h2, mlp_norm, 1e-5);
  Value mlp = b.matmul(b.multiply(b.silu(b.matmul(n2, w_gate)), b.matmul(n2, w_up)), w_down);
  return b.build({b.add(h2, mlp)});
}

class GraphCudaSource : public ::testing::TestWithParam<std::tuple<int64_t, int64_t>> {};

// Head dimensions 64 (Llama 3.2 1B) and 128 (Llama 3 8B); 16 tokens (the attention packs a
// group's query heads along M) and 70.
TEST_P(GraphCudaSource, DecoderBlockKernelsCompileForTheH200) {
  const auto [head_dim, tokens] = GetParam();
  FusionPlan plan = plan_graph_fusion(decoder_block(tokens, 256, 4, 2, head_dim, 384),
                                      target::target_by_name("sm90"));
  ASSERT_EQ(plan.rewrites.size(), 1u);
  ViewPlan views = plan_views(plan.graph);
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  std::string why;
  const runtime::cuda::Nvrtc* nvrtc = runtime::cuda::Nvrtc::shared(&why);
  std::vector<std::string> forms;
  for (const FusedRegion& region : plan.regions)
    for (RegionKernel& k : lower_region(plan, views, region, "", *options.target)) {
      forms.push_back(k.form);
      PipelineResult result = compile_to_source(k.kernel, options);
      // Prefill-length attention runs both dots on wgmma, its K/V tiles copied a step ahead
      // (the prefetch ring's slots), k K-major.
      if (k.form == "flash_attention" && tokens > 64) {
        EXPECT_EQ(result.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaStaged);
        const std::string metal = ir::print(result.metal_ir);
        EXPECT_NE(metal.find("scratch = \"prefetch\""), std::string::npos);
        EXPECT_NE(metal.find("b_k_major = 1"), std::string::npos);
      }
      if (!nvrtc) continue;
      std::string cubin =
          nvrtc->compile(result.emitted.source, result.report.kernel,
                         runtime::cuda::nvrtc_options("sm_90a"), runtime::cuda::NvrtcOutput::Cubin);
      EXPECT_EQ(cubin.substr(0, 4),
                "\x7f"
                "ELF")
          << k.form;
    }
  // The attention kernel writes the heads' merge in place (no copy); the residual add is the
  // down projection's epilogue (no last row kernel).
  EXPECT_EQ(forms,
            (std::vector<std::string>{"row", "matmul", "rotary", "matmul", "rotary", "matmul",
                                      "flash_attention", "matmul", "row", "matmul", "matmul"}));
  if (!nvrtc) GTEST_SKIP() << "NVRTC is not available (" << why << "): sources only";
}

INSTANTIATE_TEST_SUITE_P(Sizes, GraphCudaSource,
                         ::testing::Combine(::testing::Values(64, 128), ::testing::Values(16, 70)));

// Llama 3 8B's block (hidden 4096, 32 / 8 heads of 128, intermediate 14336) at T = 2048: the
// planner's estimate of the attention kernel's threadgroup memory is what the kernel stages, so
// head dimension 128 is rewritten to flash_attention on sm90 (a 64 KB prefetch ring of 227) and
// on the host (one 32 KB K/V pair, its limit); on sm90 it runs on wgmma_staged.
TEST(GraphCudaSourceHeadDim128, HiddenFourThousandBlockFusesItsAttention) {
  Graph block = decoder_block(2048, 4096, 32, 8, 128, 14336);
  EXPECT_EQ(plan_graph_fusion(block).rewrites.size(), 1u);
  const target::Target& sm90 = target::target_by_name("sm90");
  FusionPlan plan = plan_graph_fusion(block, sm90);
  ASSERT_EQ(plan.rewrites.size(), 1u) << plan.explain();
  ViewPlan views = plan_views(plan.graph);
  PipelineOptions options;
  options.target = &sm90;
  int attention = 0;
  for (const FusedRegion& region : plan.regions)
    for (RegionKernel& k : lower_region(plan, views, region, "", sm90)) {
      if (k.form != "flash_attention") continue;
      ++attention;
      PipelineResult result = compile_to_source(k.kernel, options);
      EXPECT_EQ(result.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaStaged);
      EXPECT_EQ(result.report.threadgroup_bytes, 65536);
      EXPECT_NE(result.emitted.source.find("wgmma.mma_async"), std::string::npos);
      const runtime::cuda::Nvrtc* nvrtc = runtime::cuda::Nvrtc::shared();
      if (!nvrtc) continue;
      std::string cubin =
          nvrtc->compile(result.emitted.source, result.report.kernel,
                         runtime::cuda::nvrtc_options("sm_90a"), runtime::cuda::NvrtcOutput::Cubin);
      EXPECT_EQ(cubin.substr(0, 4),
                "\x7f"
                "ELF");
    }
  EXPECT_EQ(attention, 1);
}

// The SwiGLU region's low-register schedule for sm90: two pipelined K loops in one kernel, whose
// slots share one range, the second pinned after the first's drain (verify_scratch admits it),
// on the host's tiles; on sm90's (wgmma) tiles, both dots on wgmma_staged, the gate result
// waiting in scratch.
TEST(GraphCudaSourceScratch, ScratchSpilledSwigluCompilesForTheH200) {
  FusionPlan plan = plan_graph_fusion(decoder_block(70, 256, 4, 2, 64, 384));
  ViewPlan views = plan_views(plan.graph);
  PipelineOptions options;
  options.target = &target::target_by_name("sm90");
  const runtime::cuda::Nvrtc* nvrtc = runtime::cuda::Nvrtc::shared();
  for (const FusedRegion& region : plan.regions) {
    if (region.rule != "parallel_epilogue") continue;
    for (const target::Target* tiles : {&target::default_target(), options.target}) {
      std::vector<RegionKernel> kernels =
          lower_region(plan, views, region, "scratch-spilled", *tiles);
      ASSERT_EQ(kernels.size(), 2u);
      PipelineResult result = compile_to_source(kernels[0].kernel, options);
      if (tiles == options.target) {
        EXPECT_EQ(result.report.schedule_plan.strategy, schedule::MatrixStrategy::WgmmaStaged)
            << result.report.schedule_plan.double_buffer_reason;
      }
      if (!nvrtc) continue;
      std::string cubin =
          nvrtc->compile(result.emitted.source, result.report.kernel,
                         runtime::cuda::nvrtc_options("sm_90a"), runtime::cuda::NvrtcOutput::Cubin);
      EXPECT_EQ(cubin.substr(0, 4),
                "\x7f"
                "ELF");
    }
  }
}

}  // namespace
}  // namespace metile::graph
