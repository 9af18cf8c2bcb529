// merge_online_reductions on the lit inputs (tests/lit/merge_online_reductions): the max and
// sum-of-exp loops merge under the online softmax law's certificate and still compute the
// same maximum and sum (run by the Tile IR interpreter, -inf, +inf and empty rows included);
// every unlicensed pair stays unchanged with its reason; a wrong or unfitting law is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "metile/ir/parser.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/transform/merge_online_reductions.h"
#include "tests/dsl/tile_interpreter.h"

namespace metile::transform {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

ir::Kernel lit_input(const std::string& name) {
  const std::string path =
      std::string(METILE_TEST_SOURCE_DIR) + "/tests/lit/merge_online_reductions/" + name + ".ir";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  ir::Kernel k = ir::parse(text.str(), path);
  ir::verify_or_throw(k, "");
  return k;
}

OnlineReductionMerge merge(const std::string& name,
                           const discovery::ReductionLaw& law = discovery::laws::online_softmax()) {
  OnlineReductionMerge done = merge_online_reductions(lit_input(name), law);
  ir::verify_or_throw(done.result.kernel, "merge_online_reductions");
  return done;
}

int loops(const ir::Kernel& k) {
  int n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == ir::OpKind::For; });
  return n;
}

TEST(MergeOnlineReductions, BothFormsMergeUnderTheCertificate) {
  for (const char* name :
       {"scalar_accumulators", "per_element_accumulators", "masked_elements", "row_blocks"}) {
    SCOPED_TRACE(name);
    const OnlineReductionMerge done = merge(name);
    EXPECT_TRUE(done.result.changed);
    EXPECT_EQ(loops(done.result.kernel), 1);
    ASSERT_EQ(done.records.size(), 1u);
    const OnlineReductionRecord& r = done.records[0];
    EXPECT_TRUE(r.merged);
    EXPECT_EQ(r.law, "online_softmax");
    ASSERT_EQ(r.obligations.size(), 5u);
    const char* names[] = {"left_identity", "right_identity", "associativity", "pair_homomorphism",
                           "list_homomorphism"};
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(r.obligations[i].rfind(names[i], 0), 0u);
    EXPECT_GT(r.cases_checked, 0);
    EXPECT_NE(r.detail.find("read once"), std::string::npos) << r.detail;
  }
}

TEST(MergeOnlineReductions, EachUnlicensedPairStaysWithItsReason) {
  const std::pair<const char*, const char*> cases[] = {
      {"min_then_sum", "the first loop keeps a running minimum"},
      {"store_between", "between the loops may change the data"},
      {"range_mismatch", "the loops' ranges differ"},
      {"other_term", "sums something other than exp(x - m)"},
      {"max_used_elsewhere", "sums something other than exp(x - m)"},
      {"different_data", "the loops load different data"},
      {"mask_mismatch", "the loops mask the data differently"},
  };
  for (const auto& [name, reason] : cases) {
    SCOPED_TRACE(name);
    const OnlineReductionMerge done = merge(name);
    EXPECT_FALSE(done.result.changed);
    EXPECT_EQ(ir::print(done.result.kernel), ir::print(lit_input(name)));
    ASSERT_EQ(done.records.size(), 1u);
    EXPECT_FALSE(done.records[0].merged);
    EXPECT_NE(done.records[0].detail.find(reason), std::string::npos) << done.records[0].detail;
  }
}

TEST(MergeOnlineReductions, AWrongLawIsRefusedWithItsFailedObligation) {
  discovery::ReductionLaw law = discovery::laws::online_softmax();
  law.name = "unscaled_softmax";  // adds the sums without bringing them to one maximum
  law.merge[1] = discovery::Expr::var("a.d") + discovery::Expr::var("b.d");
  const OnlineReductionMerge done = merge("scalar_accumulators", law);
  EXPECT_FALSE(done.result.changed);
  ASSERT_EQ(done.records.size(), 1u);
  EXPECT_FALSE(done.records[0].merged);
  EXPECT_NE(done.records[0].detail.find("the law did not verify: reduction law "
                                        "'unscaled_softmax' fails"),
            std::string::npos)
      << done.records[0].detail;
}

TEST(MergeOnlineReductions, ALawOfAnotherComputationIsRefused) {
  const OnlineReductionMerge done = merge("scalar_accumulators", discovery::laws::sum());
  EXPECT_FALSE(done.result.changed);
  ASSERT_EQ(done.records.size(), 1u);
  EXPECT_NE(done.records[0].detail.find("law 'sum' computes (list_sum(x)), not the loops'"),
            std::string::npos)
      << done.records[0].detail;
}

TEST(MergeOnlineReductions, RunsOnTileIrOnly) {
  ir::Kernel k = lit_input("scalar_accumulators");
  k.dialect = ir::Dialect::Metal;
  try {
    merge_online_reductions(std::move(k));
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "merge_online_reductions: kernel 'scalar_accumulators' is not Tile IR");
  }
}

// The lit kernels store m at y[0] and s at y[64] (row_blocks: four rows' at y[0..3] and
// y[64..67]); y of `rows` rows of n elements.
std::vector<double> run(const ir::Kernel& k, const std::vector<double>& x, size_t n) {
  const ir::DType dtype = k.type(k.params[0].value).dtype;
  std::vector<test::HostBuffer> buffers = {{dtype, x},
                                           {ir::DType::f32, std::vector<double>(128, 0.0)}};
  for (double& v : buffers[0].data) v = test::round_to(dtype, v);
  if (buffers[0].data.empty()) buffers[0].data.push_back(0);  // nothing is read
  std::vector<test::Arg> args = {test::BufferArg{0}, test::BufferArg{1}, static_cast<int64_t>(n)};
  if (k.params.size() == 4) args.push_back(static_cast<int64_t>(n));
  test::run_tile_ir(k, 1, args, buffers);
  return buffers[1].data;
}

void expect_same(double original, double merged, size_t at) {
  if (std::isnan(original) || std::isinf(original)) {
    EXPECT_TRUE(std::isnan(merged) ? std::isnan(original) : merged == original)
        << "y[" << at << "]: " << merged << ", not " << original;
  } else {
    EXPECT_NEAR(merged, original, 1e-5 * std::abs(original)) << "y[" << at << "]";
  }
}

TEST(MergeOnlineReductions, TheMergedLoopComputesWhatTheTwoLoopsDid) {
  std::mt19937 rng(7);
  std::normal_distribution<double> normal(0.0, 3.0);
  std::vector<std::vector<double>> rows;
  for (size_t n : {1, 7, 64, 200}) {
    std::vector<double> row(n);
    for (double& v : row) v = normal(rng);
    rows.push_back(row);
    for (size_t i = 0; i < n; i += 3) row[i] = -kInf;  // some masked scores
    rows.push_back(row);
  }
  rows.push_back({});                              // no element: the loops never run
  rows.push_back({-kInf});                         // a single -inf
  rows.push_back(std::vector<double>(70, -kInf));  // a row of only -inf
  rows.push_back({1.0, kInf, -2.0});               // +inf: the original sum is NaN
  for (const char* name :
       {"scalar_accumulators", "per_element_accumulators", "masked_elements", "row_blocks"}) {
    const ir::Kernel original = lit_input(name);
    const ir::Kernel merged = merge(name).result.kernel;
    for (const std::vector<double>& row : rows) {
      SCOPED_TRACE(std::string(name) + ", a row of " + std::to_string(row.size()));
      std::vector<double> x = row;
      if (std::string(name) == "row_blocks") {  // then a scaled, a reversed and an -inf row
        for (double v : row) x.push_back(v * 0.5);
        x.insert(x.end(), row.rbegin(), row.rend());
        x.insert(x.end(), row.size(), -kInf);
      }
      const std::vector<double> expected = run(original, x, row.size());
      const std::vector<double> got = run(merged, x, row.size());
      for (size_t i = 0; i < expected.size(); ++i) expect_same(expected[i], got[i], i);
    }
  }
}

}  // namespace
}  // namespace metile::transform
