// ParallelEpilogueRule: the SwiGLU block (gate and up matmuls sharing x, silu(gate) * up,
// the down projection) is one region in either multiply order; escapes and limits refuse it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/fusion/parallel_epilogue_rule.h"
#include "metile/graph/graph_builder.h"

namespace metile::graph {
namespace {

using Json = nlohmann::json;
using Names = std::vector<std::string>;

struct SwiGlu {
  bool silu_first = true;  // silu(gate) * up, else up * silu(gate)
  bool gate_out = false;   // the gate matmul's result is also a graph output
  const char* dtype = "f16";

  Graph build() const {
    GraphBuilder b;
    Value x = b.input("x", TensorSpec({64, 512}, dtype));
    Value wg = b.input("w_gate", TensorSpec({512, 1024}, dtype));
    Value wu = b.input("w_up", TensorSpec({512, 1024}, dtype));
    Value wd = b.input("w_down", TensorSpec({1024, 512}, dtype));
    Value gate = b.matmul(x, wg);
    Value up = b.matmul(x, wu);
    Value activated = b.silu(gate);
    Value hidden = silu_first ? b.multiply(activated, up) : b.multiply(up, activated);
    std::vector<Value> outputs{b.matmul(hidden, wd)};
    if (gate_out) outputs.push_back(gate);
    return b.build(outputs);
  }
};

const FusedRegion* rule_region(const FusionPlan& plan) {
  for (const FusedRegion& r : plan.regions)
    if (r.rule == "parallel_epilogue") return &r;
  return nullptr;
}

TEST(ParallelEpilogueRule, SwiGluIsOneRegionInEitherMultiplyOrder) {
  for (bool silu_first : {true, false}) {
    SCOPED_TRACE(silu_first ? "silu(gate) * up" : "up * silu(gate)");
    SwiGlu s;
    s.silu_first = silu_first;
    Graph g = s.build();
    FusionPlan plan = plan_graph_fusion(g);
    ASSERT_EQ(plan.regions.size(), 1u) << plan.explain();
    const FusedRegion& r = plan.regions[0];
    EXPECT_EQ(r.rule, "parallel_epilogue");
    EXPECT_EQ(r.ops, (Names{"matmul", "matmul", "silu", "multiply", "matmul"}));
    EXPECT_EQ(r.form, silu_first ? "silu(gate) * up" : "up * silu(gate)");
    EXPECT_EQ(r.schedule, "register-fused");
    EXPECT_EQ(r.roles, (std::vector<std::pair<std::string, int>>{
                           {"gate", 0}, {"up", 1}, {"silu", 2}, {"multiply", 3}, {"down", 4}}));
    EXPECT_EQ(r.inputs, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(r.outputs, (std::vector<int>{g.op(4).output}));
    // gate, up, silu and the product (64 x 1024 f16 each), written and read once.
    EXPECT_EQ(r.bytes_saved, 4 * 2 * 64 * 1024 * 2);
    EXPECT_EQ(r.launches_saved, 4);

    Json report = Json::parse(plan.explain());
    const Json& region = report["regions"][0];
    EXPECT_EQ(region["rule"], "parallel_epilogue");
    EXPECT_EQ(region["roles"]["down"], "%8 = matmul");
    EXPECT_EQ(region["schedule"], "register-fused");
  }
}

TEST(ParallelEpilogueRule, AnEscapingGateIsRejectedWithTheReason) {
  SwiGlu s;
  s.gate_out = true;
  FusionPlan plan = plan_graph_fusion(s.build());
  EXPECT_EQ(rule_region(plan), nullptr);
  ASSERT_EQ(plan.rule_rejected.size(), 1u);
  EXPECT_EQ(plan.rule_rejected[0].reason,
            "parallel_epilogue: escaping intermediate: %4 = matmul (gate) is a graph output");
  Json report = Json::parse(plan.explain());
  bool reported = false;
  for (const Json& r : report["rejected"])
    reported |= r["stage"] == "rule" && r["reason"] == plan.rule_rejected[0].reason;
  EXPECT_TRUE(reported) << plan.explain();
  // The epilogue still fuses the ordinary way, with the gate as a second output.
  EXPECT_EQ(plan.regions[0].ops, (Names{"matmul", "matmul", "silu", "multiply"}));
}

TEST(ParallelEpilogueRule, LimitsComeFromTheTarget) {
  target::Target few_registers = target::default_target();
  few_registers.registers_per_thread = 80;  // register-fused needs 100
  FusionPlan spilled = plan_graph_fusion(SwiGlu{}.build(), few_registers);
  ASSERT_NE(rule_region(spilled), nullptr) << spilled.explain();
  EXPECT_EQ(rule_region(spilled)->schedule, "scratch-spilled");

  SwiGlu f32;
  f32.dtype = "f32";  // f32 staging overflows the host's 32 KiB either way
  FusionPlan plan = plan_graph_fusion(f32.build());
  EXPECT_EQ(rule_region(plan), nullptr);
  ASSERT_EQ(plan.rule_rejected.size(), 1u);
  EXPECT_EQ(plan.rule_rejected[0].reason,
            "parallel_epilogue: resource limit: register-fused needs 65536 threadgroup bytes > "
            "32768; scratch-spilled needs 49152 threadgroup bytes > 32768");
  EXPECT_NE(rule_region(plan_graph_fusion(f32.build(), target::target_by_name("sm90"))), nullptr);
}

TEST(ParallelEpilogueRule, WithoutADownProjectionTheRuleDoesNotApply) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({64, 512}, "f16"));
  Value wg = b.input("w_gate", TensorSpec({512, 1024}, "f16"));
  Value wu = b.input("w_up", TensorSpec({512, 1024}, "f16"));
  Graph g = b.build({b.multiply(b.silu(b.matmul(x, wg)), b.matmul(x, wu))});
  FusionPlan plan = plan_graph_fusion(g);
  EXPECT_EQ(rule_region(plan), nullptr);
  EXPECT_TRUE(plan.rule_rejected.empty());
}

TEST(ParallelEpilogueRule, CanBeTurnedOff) {
  FusionOptions options;
  options.parallel_epilogue = false;
  FusionPlan plan = plan_graph_fusion(SwiGlu{}.build(), target::default_target(), options);
  EXPECT_EQ(rule_region(plan), nullptr);
  EXPECT_EQ(plan.regions.size(), 2u);  // the gated epilogue, then the down projection
}

}  // namespace
}  // namespace metile::graph
