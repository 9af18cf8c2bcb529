// eliminate_redundant_conversions: identities vanish, inverse pairs cancel, chains compose,
// an intermediate with other users stays, and an unchanged kernel comes back unchanged.
#include <gtest/gtest.h>

#include "metile/pipeline.h"
#include "metile/transform/eliminate_redundant_conversions.h"
#include "pass_test_util.h"

namespace metile::transform::testing {
namespace {

const std::string kTranspose = "#layout<(3, 4, 5, 0, 1, 2), xor 0, ept 1>";
const std::string kIdentity = "#layout<(0, 1, 2, 3, 4, 5), xor 0, ept 1>";
const std::string kSwap = "#layout<(1, 0, 2, 3, 4, 5), xor 0, ept 1>";

std::string convert(const std::string& result, const std::string& operand,
                    const std::string& layout) {
  return "  " + result + " = convert_layout " + operand + " {layout = " + layout +
         "} : tile<64xi32>\n";
}

// Stores `value` through the pointers %p + offsets (of the value's owner).
std::string store(const std::string& pointers, const std::string& offsets,
                  const std::string& value) {
  return "  " + pointers + "s = splat %p : tile<64xptr<i32>>\n  " + pointers + " = ptr_add " +
         pointers + "s, " + offsets + " : tile<64xptr<i32>>\n  store " + pointers + ", " + value +
         "\n";
}

// %0: the implicit arange; %t: the arange owned by kTranspose; %s: by kSwap.
const std::string kAranges =
    "  %0 = arange {end = 64, start = 0} : tile<64xi32>\n"
    "  %t = arange {end = 64, start = 0, layout = " +
    kTranspose +
    "} : tile<64xi32>\n"
    "  %s = arange {end = 64, start = 0, layout = " +
    kSwap + "} : tile<64xi32>\n";

ConversionElimination eliminate(const std::string& body) {
  ir::Kernel k = ir::parse(tile_kernel(body), "k.ir");
  ir::verify_or_throw(k, "");
  ConversionElimination done = eliminate_redundant_conversions(std::move(k));
  ir::verify_or_throw(done.result.kernel, "eliminate_redundant_conversions");
  return done;
}

std::string printed(const std::string& body) {
  return ir::print(ir::parse(tile_kernel(body)));
}

TEST(EliminateRedundantConversions, AKernelWithoutConversionsIsUnchanged) {
  const std::string body = kAranges + store("%q", "%t", "%t");
  const ConversionElimination done = eliminate(body);
  EXPECT_FALSE(done.result.changed);
  EXPECT_TRUE(done.optimizations.empty());
  EXPECT_EQ(ir::print(done.result.kernel), printed(body));
}

TEST(EliminateRedundantConversions, ANeededConversionStays) {
  const std::string body = kAranges + convert("%c", "%0", kTranspose) + store("%q", "%t", "%c");
  const ConversionElimination done = eliminate(body);
  EXPECT_FALSE(done.result.changed);
  EXPECT_EQ(ir::print(done.result.kernel), printed(body));
}

TEST(EliminateRedundantConversions, IdentitiesVanish) {
  const ConversionElimination done =
      eliminate(kAranges + convert("%c", "%t", kTranspose) + store("%q", "%t", "%c"));
  EXPECT_TRUE(done.result.changed);
  EXPECT_EQ(ir::print(done.result.kernel), printed(kAranges + store("%q", "%t", "%t")));
  ASSERT_EQ(done.optimizations.size(), 1u);
  EXPECT_EQ(done.optimizations[0].rule, "identity");
  EXPECT_EQ(done.optimizations[0].conversion, "%3");
  EXPECT_EQ(done.optimizations[0].proof,
            "%1 is already owned by ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 threads, 1 per "
            "thread), so converting it moves nothing");
}

TEST(EliminateRedundantConversions, AConversionToTheImplicitIdentityIsAnIdentity) {
  const ConversionElimination done =
      eliminate(kAranges + convert("%c", "%0", kIdentity) + store("%q", "%0", "%c"));
  EXPECT_EQ(ir::print(done.result.kernel), printed(kAranges + store("%q", "%0", "%0")));
  ASSERT_EQ(done.optimizations.size(), 1u);
  EXPECT_EQ(done.optimizations[0].rule, "identity");
}

TEST(EliminateRedundantConversions, InversePairsCancel) {
  const ConversionElimination done =
      eliminate(kAranges + convert("%a", "%0", kTranspose) + "  %b = convert_layout %a {layout = " +
                kIdentity + "} : tile<64xi32> loc(\"k.py\":7)\n" + store("%q", "%0", "%b"));
  EXPECT_EQ(ir::print(done.result.kernel), printed(kAranges + store("%q", "%0", "%0")));
  ASSERT_EQ(done.optimizations.size(), 1u);
  EXPECT_EQ(done.optimizations[0].rule, "inverse pair");
  EXPECT_EQ(done.optimizations[0].conversion, "%4 at k.py:7");
  EXPECT_EQ(done.optimizations[0].proof,
            "%3 = convert_layout(%0) to ThreadLayout((3, 4, 5, 0, 1, 2), xor 0, 64 threads, 1 per "
            "thread), and converting it back to identity(64 elements, 64 threads, 1 per thread) "
            "gives the values of %0 where they were");
}

TEST(EliminateRedundantConversions, ChainsCompose) {
  const ConversionElimination done =
      eliminate(kAranges + convert("%a", "%0", kTranspose) + convert("%b", "%a", kSwap) +
                convert("%c", "%b", kTranspose) + store("%q", "%t", "%c"));
  EXPECT_EQ(ir::print(done.result.kernel),
            printed(kAranges + convert("%c", "%0", kTranspose) + store("%q", "%t", "%c")));
  ASSERT_EQ(done.optimizations.size(), 2u);
  EXPECT_EQ(done.optimizations[0].rule, "chain");
  EXPECT_EQ(done.optimizations[0].proof,
            "%3 = convert_layout(%0) has no other user, so %4 converts %0 to "
            "ThreadLayout((1, 0, 2, 3, 4, 5), xor 0, 64 threads, 1 per thread) directly; "
            "convert_layout keeps every logical value, so the intermediate owner is unobservable");
  EXPECT_EQ(done.optimizations[1].rule, "chain");
}

TEST(EliminateRedundantConversions, AnIntermediateWithOtherUsersStays) {
  const std::string body = kAranges + convert("%a", "%0", kTranspose) + convert("%b", "%a", kSwap) +
                           store("%q", "%t", "%a") + store("%r", "%s", "%b");
  const ConversionElimination done = eliminate(body);
  EXPECT_FALSE(done.result.changed);
  EXPECT_EQ(ir::print(done.result.kernel), printed(body));
}

TEST(EliminateRedundantConversions, AnInversePairCancelsButAUsedIntermediateStays) {
  const ConversionElimination done =
      eliminate(kAranges + convert("%a", "%0", kTranspose) + convert("%b", "%a", kIdentity) +
                store("%q", "%t", "%a") + store("%r", "%0", "%b"));
  EXPECT_EQ(ir::print(done.result.kernel),
            printed(kAranges + convert("%a", "%0", kTranspose) + store("%q", "%t", "%a") +
                    store("%r", "%0", "%0")));
  ASSERT_EQ(done.optimizations.size(), 1u);
  EXPECT_EQ(done.optimizations[0].rule, "inverse pair");
}

TEST(EliminateRedundantConversions, OwnershipIsCheckedFirst) {
  EXPECT_THROW(
      eliminate(kAranges + convert("%c", "%s", kSwap) + "  %d = add %t, %c : tile<64xi32>\n"),
      UserError);
}

// The pipeline runs the pass before planning and the execution report lists what it did:
// with the pair cancelled, the kernel lowers as one without layouts.
TEST(EliminateRedundantConversions, TheExecutionReportRecordsTheProofs) {
  ir::Kernel k = ir::parse(tile_kernel("  %0 = arange {end = 64, start = 0} : tile<64xi32>\n" +
                                       convert("%a", "%0", kTranspose) +
                                       convert("%b", "%a", kIdentity) + store("%q", "%0", "%b")));
  const PipelineResult r = compile_to_source(std::move(k));
  const nlohmann::json j = r.report.to_json()["layout_optimizations"];
  EXPECT_EQ(j["inverse_pairs_cancelled"], 1);
  EXPECT_EQ(j["identities_removed"], 0);
  EXPECT_EQ(j["chains_composed"], 0);
  ASSERT_EQ(j["rewrites"].size(), 1u);
  EXPECT_EQ(j["rewrites"][0]["rule"], "inverse pair");
  bool changed = false;
  for (const schedule::PassRecord& p : r.report.passes)
    if (p.name == "eliminate_redundant_conversions") changed = p.changed;
  EXPECT_TRUE(changed);
}

}  // namespace
}  // namespace metile::transform::testing
