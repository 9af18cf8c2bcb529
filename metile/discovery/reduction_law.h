// ReductionLaw: a reduction written as a monoid over a small state, with a proof obligation
// per algebraic property, checked before any rewrite may use it (seed 001, "Proof-Carrying
// Discovery"; docs/discovery.md states exactly what is proved and what is checked).
//
// A law summarises a list of elements x1..xn as a state:
//   state(x1..xn) = merge(...merge(merge(identity, lift(x1)), lift(x2))..., lift(xn))
// and `finalise(state)` must equal `reference(x1..xn)`, the materialised computation the law
// replaces (for log-sum-exp: max + log(sum(exp(x - max))), two passes over the list).
//
// verify(law) discharges five obligations:
//   left_identity      merge(identity, a) = a
//   right_identity     merge(a, identity) = a
//   associativity      merge(merge(a, b), c) = merge(a, merge(b, c))
//   pair_homomorphism  finalise(merge(lift(x), lift(y))) = reference([x, y])
//   list_homomorphism  for every list xs and split xs = ys ++ zs:
//                        merge(state(ys), state(zs)) = state(xs) and
//                        finalise(state(xs)) = reference(xs)
// each either symbolically (normal forms agree, exact over the reals) or, where
// normalisation cannot decide (exp, log, select), by evaluation over a generated case set
// with an explicit tolerance. The result is a Certificate naming the method and the cases of
// every obligation, or a Refutation: the first obligation that failed, with a counterexample.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metile/discovery/expr.h"

namespace metile::discovery {

// The values an element component takes, and so the values the case set draws from.
enum class Domain : uint8_t {
  Finite,          // finite reals
  FiniteOrNegInf,  // finite reals and -inf (masked scores); every list holds a finite one
  Extended,        // finite reals, -inf and +inf
};
std::string_view domain_name(Domain d);  // "finite", "finite_or_neg_inf", "extended"
// Throws UserError naming the accepted names.
Domain parse_domain(std::string_view name);

struct ElementComponent {
  std::string name;
  Domain domain = Domain::Finite;
};

struct ReductionLaw {
  std::string name;
  std::vector<std::string> state;         // component names, e.g. {"m", "d", "n"}
  std::vector<ElementComponent> element;  // e.g. {{"s", FiniteOrNegInf}, {"v", Finite}}
  std::vector<Expr> identity;             // constants, one per state component
  std::vector<Expr> merge;                // one per state component, over a.<c> and b.<c>
  std::vector<Expr> lift;                 // one per state component, over element names
  std::vector<Expr> finalise;             // the results, over state component names
  std::vector<Expr> reference;            // one per result, list reductions over elements

  // Throws UserError naming the field and the rule when the law is malformed: counts that
  // disagree, a non-constant identity, a variable a field may not read, a list reduction
  // outside `reference`, duplicate names.
  void check_well_formed() const;
  // The law and the statements of its obligations, one per line.
  std::string str() const;
};

enum class Obligation : uint8_t {
  LeftIdentity,
  RightIdentity,
  Associativity,
  PairHomomorphism,
  ListHomomorphism,
};
std::string_view obligation_name(Obligation o);       // "left_identity"
std::string_view obligation_statement(Obligation o);  // "merge(identity, a) = a"
inline constexpr Obligation kObligations[] = {
    Obligation::LeftIdentity, Obligation::RightIdentity, Obligation::Associativity,
    Obligation::PairHomomorphism, Obligation::ListHomomorphism};

enum class ProofMethod : uint8_t { Symbolic, Cases };
std::string_view proof_method_name(ProofMethod m);  // "symbolic", "cases"

// Two doubles agree when both are NaN, or equal (infinities of one sign included), or
// |l - r| <= atol + rtol * max(|l|, |r|).
struct Tolerance {
  double rtol = 1e-9;
  double atol = 1e-12;
  bool agree(double l, double r) const;
};

struct DischargedObligation {
  Obligation obligation;
  ProofMethod method;
  int cases = 0;       // equalities evaluated (Cases); 0 when Symbolic
  std::string detail;  // Symbolic: the normal form(s); Cases: what the cases were
};

struct Certificate {
  std::string law;
  std::vector<DischargedObligation> obligations;  // in kObligations order
  Tolerance tolerance;                            // used by the Cases obligations
  std::string str() const;
  int cases() const;  // total over the obligations
};

struct Refutation {
  std::string law;
  Obligation obligation;
  std::string counterexample;  // the bindings and both sides' values
  std::string str() const;     // "law 'bad_sum' fails associativity (...): a = 1, ..."
};

struct Verification {
  std::optional<Certificate> certificate;  // every obligation discharged
  std::optional<Refutation> refutation;    // otherwise the first that failed
  bool verified() const { return certificate.has_value(); }
};

// Checks well-formedness (UserError when malformed), then every obligation in order. The
// result is remembered per law (its text) and tolerance for the life of the process.
Verification verify(const ReductionLaw& law, const Tolerance& tolerance = {});

// The built-in laws; each verifies.
namespace laws {
ReductionLaw sum();  // state s; lift x; reference list_sum(x)
ReductionLaw max();  // state m; lift x; reference list_max(x)
ReductionLaw min();  // state m; lift x; reference list_min(x)
// The online form of a maximum pass followed by a sum-of-exp pass: state (m, d),
// lift x -> (x, 1), finalise (m, d), reference (list_max(x), list_sum(exp(x - list_max(x)))).
ReductionLaw online_softmax();
// The same state, finalised as m + log(d): reference list_max(x) + log(list_sum(exp(x - max))).
ReductionLaw log_sum_exp();
// Attention's softmax-weighted sum: elements (s, v), state (maximum m, normaliser d,
// numerator n), finalise n / d, reference
// list_sum(exp(s - list_max(s)) * v) / list_sum(exp(s - list_max(s))).
ReductionLaw weighted_softmax();
// Every built-in, in the order above.
std::vector<ReductionLaw> all();
}  // namespace laws

}  // namespace metile::discovery
