#include "metile/discovery/reduction_law.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "metile/support/errors.h"

namespace metile::discovery {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
Expr v(const char* n) {
  return Expr::var(n);
}
Expr c(double x) {
  return Expr::constant(x);
}

Refutation refuted(const ReductionLaw& law) {
  Verification r = verify(law);
  EXPECT_FALSE(r.verified()) << law.name << " verified but should not";
  return r.refutation.value_or(Refutation{});
}

TEST(ReductionLaw, EveryBuiltInVerifies) {
  for (const ReductionLaw& law : laws::all()) {
    Verification r = verify(law);
    ASSERT_TRUE(r.verified()) << r.refutation->str();
    ASSERT_EQ(r.certificate->obligations.size(), 5u);
    for (size_t i = 0; i < 5; ++i)
      EXPECT_EQ(r.certificate->obligations[i].obligation, kObligations[i]);
    EXPECT_EQ(r.certificate->law, law.name);
  }
}

TEST(ReductionLaw, SumMaxMinAreProvedSymbolically) {
  for (const ReductionLaw& law : {laws::sum(), laws::max(), laws::min()}) {
    Certificate cert = *verify(law).certificate;
    for (const DischargedObligation& d : cert.obligations) {
      EXPECT_EQ(d.method, ProofMethod::Symbolic)
          << law.name << " " << obligation_name(d.obligation);
      EXPECT_EQ(d.cases, 0);
    }
  }
  Certificate max = *verify(laws::max()).certificate;
  EXPECT_EQ(max.obligations[2].detail, "both sides normalise to max(a.s, b.s, c.s)");
}

TEST(ReductionLaw, TranscendentalLawsAreCheckedOnCases) {
  Certificate cert = *verify(laws::weighted_softmax()).certificate;
  for (const DischargedObligation& d : cert.obligations) {
    EXPECT_EQ(d.method, ProofMethod::Cases) << obligation_name(d.obligation);
    EXPECT_GT(d.cases, 0);
  }
  // 11 score values (with -inf) zipped with 10 values: 11 elements; the pool is the identity,
  // 11 lifts and 8 list states; associativity takes every triple of the pool.
  EXPECT_EQ(cert.obligations[0].cases, 20);
  EXPECT_EQ(cert.obligations[2].cases, 20 * 20 * 20);
  // Every ordered pair but [-inf, -inf], which is fully masked.
  EXPECT_EQ(cert.obligations[3].cases, 11 * 11 - 1);
  std::string text = cert.str();
  EXPECT_NE(text.find("associativity: merge(merge(a, b), c) = merge(a, merge(b, c))"),
            std::string::npos);
  EXPECT_NE(text.find("checked on 8000 cases: every triple of pool states (20 states)"),
            std::string::npos)
      << text;
}

TEST(ReductionLaw, RejectsANonAssociativeMerge) {
  // merge(a, b) = a + b + a^2 b^2 has identity 0 on both sides but is not associative.
  ReductionLaw law = laws::sum();
  law.name = "squares";
  law.merge = {v("a.s") + v("b.s") + v("a.s") * v("a.s") * v("b.s") * v("b.s")};
  Refutation r = refuted(law);
  EXPECT_EQ(r.obligation, Obligation::Associativity);
  EXPECT_NE(r.str().find("reduction law 'squares' fails associativity"), std::string::npos);
  EXPECT_NE(r.counterexample.find("merge(merge(a, b), c) = "), std::string::npos)
      << r.counterexample;
}

TEST(ReductionLaw, RejectsSubtractionAtItsIdentity) {
  ReductionLaw law = laws::sum();
  law.name = "difference";
  law.merge = {v("a.s") - v("b.s")};
  Refutation r = refuted(law);
  EXPECT_EQ(r.obligation, Obligation::LeftIdentity);
  EXPECT_EQ(r.counterexample, "a = (s=1e-06): merge(identity, a) = (-1e-06), a = (1e-06)");
}

TEST(ReductionLaw, RejectsAWrongIdentity) {
  ReductionLaw law = laws::sum();
  law.name = "sum_from_one";
  law.identity = {c(1)};
  Refutation r = refuted(law);
  EXPECT_EQ(r.obligation, Obligation::LeftIdentity);
  EXPECT_EQ(r.counterexample, "a = (s=1): merge(identity, a) = (2), a = (1)");

  ReductionLaw max = laws::max();
  max.identity = {c(0)};  // max(0, -1) is not -1
  EXPECT_EQ(refuted(max).obligation, Obligation::LeftIdentity);
}

TEST(ReductionLaw, RejectsALiftThatDisagreesWithTheReference) {
  ReductionLaw law = laws::sum();
  law.lift = {v("x") * c(2)};
  Refutation r = refuted(law);
  EXPECT_EQ(r.obligation, Obligation::PairHomomorphism);
  EXPECT_NE(r.counterexample.find("reference([x, y]) = "), std::string::npos);
}

TEST(ReductionLaw, RejectsAnOnlineSoftmaxThatDoesNotRescale) {
  // Adding the normalisers without moving them to the new maximum is associative, and wrong.
  ReductionLaw law = laws::online_softmax();
  law.merge[1] = v("a.d") + v("b.d");
  Refutation r = refuted(law);
  EXPECT_EQ(r.obligation, Obligation::PairHomomorphism);
  EXPECT_NE(r.counterexample.find("[x, y] = [0, 1]"), std::string::npos) << r.counterexample;
}

TEST(ReductionLaw, RejectsARescaleWithoutTheEqualMaximumGuard) {
  // exp(a.m - m) with a.m = m = -inf is NaN: two fully masked parts do not merge.
  ReductionLaw law = laws::weighted_softmax();
  Expr m = max(v("a.m"), v("b.m"));
  law.merge[1] = v("a.d") * exp(v("a.m") - m) + v("b.d") * exp(v("b.m") - m);
  EXPECT_EQ(refuted(law).obligation, Obligation::LeftIdentity);
}

TEST(ReductionLaw, RejectsASoftmaxWithoutTheMaximum) {
  // Summing exp(x) unshifted gives a normaliser that is not the reference's sum of exp(x - max).
  ReductionLaw law = laws::online_softmax();
  law.lift = {v("x"), exp(v("x"))};
  law.merge[1] = v("a.d") + v("b.d");
  EXPECT_EQ(refuted(law).obligation, Obligation::PairHomomorphism);
}

TEST(ReductionLaw, MalformedLawsAreUserErrors) {
  auto message = [](const ReductionLaw& law) {
    try {
      verify(law);
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  ReductionLaw law = laws::sum();
  law.merge = {v("a.s") + v("c.s")};
  EXPECT_EQ(message(law),
            "reduction law 'sum': merge reads 'c.s', which it may not (it may read a.s, b.s): "
            "a.s + c.s");
  law = laws::sum();
  law.identity = {v("x")};
  EXPECT_EQ(message(law),
            "reduction law 'sum': identity reads 'x', which it may not (nothing outside a list "
            "reduction): x");
  law = laws::sum();
  law.lift = {list_sum(v("x"))};
  EXPECT_EQ(message(law), "reduction law 'sum': lift may not use list reductions: list_sum(x)");
  law = laws::sum();
  law.reference = {v("x")};
  EXPECT_EQ(message(law),
            "reduction law 'sum': reference reads 'x', which it may not (nothing outside a list "
            "reduction): x");
  law = laws::online_softmax();
  law.identity = {c(0)};
  EXPECT_EQ(message(law), "reduction law 'online_softmax': identity has 1 expressions, expected 2");
  law = laws::sum();
  law.element = {{"s", Domain::Finite}};
  EXPECT_EQ(message(law), "reduction law 'sum': the name 's' is used twice");
}

TEST(ReductionLaw, PrintsItsObligations) {
  std::string text = laws::weighted_softmax().str();
  EXPECT_NE(text.find("ReductionLaw weighted_softmax"), std::string::npos);
  EXPECT_NE(text.find("element   s (finite_or_neg_inf), v (finite)"), std::string::npos) << text;
  EXPECT_NE(text.find("identity  (-inf, 0, 0)"), std::string::npos);
  EXPECT_NE(text.find("m = max(a.m, b.m)"), std::string::npos);
  for (Obligation o : kObligations)
    EXPECT_NE(
        text.find(std::string(obligation_name(o)) + ": " + std::string(obligation_statement(o))),
        std::string::npos);
}

TEST(Tolerance, AgreesOnNaNsAndInfinitiesExactly) {
  Tolerance t;
  EXPECT_TRUE(t.agree(std::nan(""), std::nan("")));
  EXPECT_FALSE(t.agree(std::nan(""), 1.0));
  EXPECT_TRUE(t.agree(-kInf, -kInf));
  EXPECT_FALSE(t.agree(kInf, 1e300));
  EXPECT_TRUE(t.agree(1.0, 1.0 + 1e-12));
  EXPECT_FALSE(t.agree(1.0, 1.0 + 1e-6));
}

}  // namespace
}  // namespace metile::discovery
