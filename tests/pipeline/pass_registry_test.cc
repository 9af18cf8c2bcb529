// The pass registry: one name per pipeline step, the names the ExecutionReport lists, and a
// `changed` flag from every pass that agrees with comparing the printed IR.
#include "metile/pass_registry.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "expected_pipeline.h"
#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/kernels/kernels.h"
#include "metile/support/errors.h"

namespace metile {
namespace {

const char kTensorCopy[] =
    "tile.kernel @copy(%src: ptr<f32> {access = \"read\"}, %out: ptr<f32> {access = "
    "\"write\"}, %n: i32) {\n"
    "  %one = constant {value = 1} : i32\n"
    "  %t = make_tensor %src, %n, %one {access = \"read\"} : desc<1xf32>\n"
    "  %i = arange {end = 64, start = 0} : tile<64xi32>\n"
    "  %v = tensor_load %t, %i : tile<64xf32>\n"
    "  %os = splat %out : tile<64xptr<f32>>\n"
    "  %op = ptr_add %os, %i : tile<64xptr<f32>>\n"
    "  store %op, %v\n"
    "}\n";

std::vector<ir::Kernel> corpus() {
  std::vector<ir::Kernel> all = kernels::library({ir::DType::f32, ir::DType::f16});
  all.push_back(ir::parse(kTensorCopy));
  return all;
}

TEST(PassRegistry, OneNamePerStepInPipelineOrder) {
  const std::vector<std::string> expected = {"verify",
                                             "apply_math_mode",
                                             "canonicalize",
                                             "rebase_carried_pointers",
                                             "form_descriptor_matmul",
                                             "match_async_gemm",
                                             "expand_tensor_access",
                                             "cse",
                                             "merge_online_reductions",
                                             "dce",
                                             "derive_induction_values",
                                             "prefetch_dot_operands",
                                             "peel_complete_iterations",
                                             "eliminate_redundant_conversions",
                                             "check_ownership",
                                             "check_matrix_barriers",
                                             "check_device_tiles",
                                             "plan_threads",
                                             "plan_schedule",
                                             "check_resources",
                                             "lower_to_metal",
                                             "verify_scratch",
                                             "verify_software_pipeline",
                                             "verify_async_pipeline",
                                             "group_vector_accesses",
                                             "verify_vector_accesses",
                                             "emit_msl",
                                             "emit_cuda",
                                             "emit_ptx"};
  EXPECT_EQ(pass_names(), expected);
  for (const std::string& name : pass_names()) {
    EXPECT_EQ(find_pass(name).name, name);
    EXPECT_FALSE(find_pass(name).description.empty()) << name;
  }
}

TEST(PassRegistry, TheReportListsThePassesByTheirRegisteredNames) {
  const PipelineResult r = compile_to_source(kernels::softmax(ir::DType::f32));
  std::vector<std::string> reported;
  for (const schedule::PassRecord& p : r.report.passes) reported.push_back(p.name);
  EXPECT_EQ(reported, kPipelineSteps);
}

TEST(PassRegistry, DashesSpellTheSamePass) {
  EXPECT_EQ(find_pass("emit-msl").name, "emit_msl");
  EXPECT_EQ(find_pass("expand-tensor-access").name, "expand_tensor_access");
}

TEST(PassRegistry, EmitMslRejectsATargetOfAnotherLanguage) {
  PassContext context(target::target_by_name("sm90"));
  try {
    find_pass("emit_msl").run(ir::Kernel{}, context);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "emit_msl: target sm90 does not take Metal Shading Language");
  }
}

TEST(PassRegistry, EmitCudaRejectsATargetOfAnotherLanguage) {
  PassContext context(target::default_target());
  try {
    find_pass("emit-cuda").run(ir::Kernel{}, context);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()), "emit_cuda: target host does not take CUDA C++");
  }
}

TEST(PassRegistry, EmitPassFollowsTheTargetsLanguage) {
  EXPECT_EQ(emit_pass_for(target::default_target()), "emit_msl");
  EXPECT_EQ(emit_pass_for(target::target_by_name("apple-m1")), "emit_msl");
  EXPECT_EQ(emit_pass_for(target::target_by_name("sm90")), "emit_cuda");
}

TEST(PassRegistry, UnknownPassListsTheKnownOnes) {
  try {
    find_pass("lower");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown pass 'lower'; known passes: verify, apply_math_mode, canonicalize, "
              "rebase_carried_pointers, form_descriptor_matmul, match_async_gemm, "
              "expand_tensor_access, cse, "
              "merge_online_reductions, dce, derive_induction_values, prefetch_dot_operands, "
              "peel_complete_iterations, eliminate_redundant_conversions, check_ownership, "
              "check_matrix_barriers, check_device_tiles, plan_threads, plan_schedule, "
              "check_resources, lower_to_metal, verify_scratch, "
              "verify_software_pipeline, verify_async_pipeline, group_vector_accesses, "
              "verify_vector_accesses, emit_msl, emit_cuda, emit_ptx");
  }
}

TEST(PassRegistry, LowerToMetalNeedsAThreadPlan) {
  PassContext context(target::default_target());
  try {
    find_pass("lower_to_metal").run(kernels::vector_add(ir::DType::f32), context);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("run plan_threads before lower_to_metal"),
              std::string::npos)
        << e.what();
  }
}

// Running the registered passes by hand gives what compile_to_source gives.
TEST(PassRegistry, PassesByNameReproduceThePipeline) {
  for (MathMode math : {MathMode::Default, MathMode::Strict, MathMode::Relaxed}) {
    for (const ir::Kernel& input : corpus()) {
      SCOPED_TRACE(input.name);
      PassContext context(target::default_target(), math);
      ir::Kernel k = input;
      for (const std::string& name : kPipelineSteps)
        k = find_pass(name).run(std::move(k), context).kernel;
      PipelineOptions options;
      options.math = math;
      const PipelineResult r = compile_to_source(input, options);
      ASSERT_TRUE(context.emitted);
      EXPECT_EQ(context.emitted->source, r.emitted.source);
      EXPECT_EQ(context.thread_plan->reason, r.report.thread_plan_reason);
      EXPECT_EQ(context.lowering.value_layouts, r.report.value_layouts);
      EXPECT_EQ(context.lowering.allocations.size(), r.report.allocations.size());
    }
  }
}

// Each pass says whether it changed the IR; the printed IR before and after must agree, and
// across the corpus every rewriting pass must be seen both changing and not changing it.
TEST(PassRegistry, ChangedAgreesWithThePrintedIr) {
  std::map<std::string, std::set<bool>> seen;
  for (MathMode math : {MathMode::Default, MathMode::Strict, MathMode::Relaxed}) {
    for (const ir::Kernel& input : corpus()) {
      PassContext context(target::default_target(), math);
      ir::Kernel k = input;
      for (const std::string& name : kPipelineSteps) {
        if (name == "emit_msl") break;
        SCOPED_TRACE(input.name + " " + name);
        const std::string before = ir::print(k);
        ir::PassResult result = find_pass(name).run(std::move(k), context);
        ir::verify_or_throw(result.kernel, name);
        EXPECT_EQ(result.changed, ir::print(result.kernel) != before);
        seen[name].insert(result.changed);
        k = std::move(result.kernel);
      }
    }
  }
  for (const char* name : {"apply_math_mode", "canonicalize", "expand_tensor_access", "cse", "dce"})
    EXPECT_EQ(seen[name], (std::set<bool>{false, true})) << name;
  EXPECT_EQ(seen["verify"], std::set<bool>{false});
  EXPECT_EQ(seen["plan_threads"], std::set<bool>{false});
  EXPECT_EQ(seen["check_resources"], std::set<bool>{false});
  EXPECT_EQ(seen["lower_to_metal"], std::set<bool>{true});
}

}  // namespace
}  // namespace metile
