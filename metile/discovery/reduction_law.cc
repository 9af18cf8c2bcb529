#include "metile/discovery/reduction_law.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "metile/support/errors.h"

namespace metile::discovery {

std::string_view domain_name(Domain d) {
  switch (d) {
    case Domain::Finite:
      return "finite";
    case Domain::FiniteOrNegInf:
      return "finite_or_neg_inf";
    case Domain::Extended:
      return "extended";
  }
  throw InternalError("domain_name: unknown domain");
}

Domain parse_domain(std::string_view name) {
  for (Domain d : {Domain::Finite, Domain::FiniteOrNegInf, Domain::Extended})
    if (domain_name(d) == name) return d;
  throw UserError("reduction law: unknown element domain '" + std::string(name) +
                  "' (finite, finite_or_neg_inf, extended)");
}

std::string_view obligation_name(Obligation o) {
  switch (o) {
    case Obligation::LeftIdentity:
      return "left_identity";
    case Obligation::RightIdentity:
      return "right_identity";
    case Obligation::Associativity:
      return "associativity";
    case Obligation::PairHomomorphism:
      return "pair_homomorphism";
    case Obligation::ListHomomorphism:
      return "list_homomorphism";
  }
  throw InternalError("obligation_name: unknown obligation");
}

std::string_view obligation_statement(Obligation o) {
  switch (o) {
    case Obligation::LeftIdentity:
      return "merge(identity, a) = a";
    case Obligation::RightIdentity:
      return "merge(a, identity) = a";
    case Obligation::Associativity:
      return "merge(merge(a, b), c) = merge(a, merge(b, c))";
    case Obligation::PairHomomorphism:
      return "finalise(merge(lift(x), lift(y))) = reference([x, y])";
    case Obligation::ListHomomorphism:
      return "merge(state(ys), state(zs)) = state(ys ++ zs) and "
             "finalise(state(xs)) = reference(xs)";
  }
  throw InternalError("obligation_statement: unknown obligation");
}

std::string_view proof_method_name(ProofMethod m) {
  switch (m) {
    case ProofMethod::Symbolic:
      return "symbolic";
    case ProofMethod::Cases:
      return "cases";
  }
  throw InternalError("proof_method_name: unknown method");
}

bool Tolerance::agree(double l, double r) const {
  if (std::isnan(l) || std::isnan(r)) return std::isnan(l) && std::isnan(r);
  if (l == r) return true;
  if (std::isinf(l) || std::isinf(r)) return false;
  return std::abs(l - r) <= atol + rtol * std::max(std::abs(l), std::abs(r));
}

namespace {

std::string fail(const ReductionLaw& law, const std::string& rule) {
  return "reduction law '" + law.name + "': " + rule;
}

void check_names(const ReductionLaw& law, const std::vector<std::string>& names, const char* what,
                 std::set<std::string>& seen) {
  if (names.empty()) throw UserError(fail(law, std::string("needs at least one ") + what));
  for (const std::string& n : names) {
    bool ok = !n.empty() && std::all_of(n.begin(), n.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
    if (!ok)
      throw UserError(
          fail(law, std::string(what) + " name '" + n + "' is not an identifier ([A-Za-z0-9_]+)"));
    if (!seen.insert(n).second) throw UserError(fail(law, "the name '" + n + "' is used twice"));
  }
}

void check_field(const ReductionLaw& law, const char* field, const std::vector<Expr>& exprs,
                 size_t count, const std::set<std::string>& readable, bool lists) {
  if (exprs.size() != count)
    throw UserError(fail(law, std::string(field) + " has " + std::to_string(exprs.size()) +
                                  " expressions, expected " + std::to_string(count)));
  for (const Expr& e : exprs) {
    if (!lists && e.has_list_reduction())
      throw UserError(fail(law, std::string(field) + " may not use list reductions: " + e.str()));
    for (const std::string& v : e.free_variables())
      if (!readable.count(v)) {
        std::string allowed;
        for (const std::string& r : readable) allowed += (allowed.empty() ? "" : ", ") + r;
        throw UserError(fail(law, std::string(field) + " reads '" + v + "', which it may not (" +
                                      (allowed.empty() ? "nothing outside a list reduction"
                                                       : "it may read " + allowed) +
                                      "): " + e.str()));
      }
  }
}

// Every variable inside the reference's list reductions is an element component.
void check_list_bodies(const ReductionLaw& law, const Expr& e,
                       const std::set<std::string>& element_names) {
  if (is_list_reduction(e.kind()))
    for (const std::string& v : e.operands()[0].free_variables())
      if (!element_names.count(v))
        throw UserError(fail(law, "reference reads '" + v + "' inside " + e.str() +
                                      "; a list reduction reads element components only"));
  for (const Expr& o : e.operands()) check_list_bodies(law, o, element_names);
}

std::string tuple_text(const std::vector<Expr>& exprs) {
  std::string s = "(";
  for (size_t i = 0; i < exprs.size(); ++i) s += (i ? ", " : "") + exprs[i].str();
  return s + ")";
}

}  // namespace

void ReductionLaw::check_well_formed() const {
  if (name.empty()) throw UserError("reduction law: needs a name");
  std::set<std::string> seen;
  check_names(*this, state, "state component", seen);
  std::vector<std::string> element_names;
  for (const ElementComponent& c : element) element_names.push_back(c.name);
  check_names(*this, element_names, "element component", seen);

  std::set<std::string> state_names(state.begin(), state.end());
  std::set<std::string> elements(element_names.begin(), element_names.end());
  std::set<std::string> merge_names;
  for (const std::string& c : state) {
    merge_names.insert("a." + c);
    merge_names.insert("b." + c);
  }
  check_field(*this, "identity", identity, state.size(), {}, false);
  for (const Expr& e : identity)
    if (e.kind() != ExprKind::Const)
      throw UserError(fail(*this, "identity must be constants, got " + e.str()));
  check_field(*this, "merge", merge, state.size(), merge_names, false);
  check_field(*this, "lift", lift, state.size(), elements, false);
  if (finalise.empty()) throw UserError(fail(*this, "finalise needs at least one expression"));
  check_field(*this, "finalise", finalise, finalise.size(), state_names, false);
  check_field(*this, "reference", reference, finalise.size(), {}, true);
  for (const Expr& e : reference) check_list_bodies(*this, e, elements);
}

std::string ReductionLaw::str() const {
  std::ostringstream os;
  os << "ReductionLaw " << name << "\n  element   ";
  for (size_t i = 0; i < element.size(); ++i)
    os << (i ? ", " : "") << element[i].name << " (" << domain_name(element[i].domain) << ")";
  os << "\n  state     (";
  for (size_t i = 0; i < state.size(); ++i) os << (i ? ", " : "") << state[i];
  os << ")\n  identity  " << tuple_text(identity) << "\n";
  for (size_t i = 0; i < merge.size() && i < state.size(); ++i)
    os << (i ? "            " : "  merge     ") << state[i] << " = " << merge[i].str() << "\n";
  os << "  lift      " << tuple_text(lift) << "\n  finalise  " << tuple_text(finalise)
     << "\n  reference " << tuple_text(reference) << "\n  obligations\n";
  for (Obligation o : kObligations)
    os << "    " << obligation_name(o) << ": " << obligation_statement(o) << "\n";
  return os.str();
}

int Certificate::cases() const {
  int total = 0;
  for (const DischargedObligation& d : obligations) total += d.cases;
  return total;
}

std::string Certificate::str() const {
  std::ostringstream os;
  os << "Certificate for " << law << " (rtol " << tolerance.rtol << ", atol " << tolerance.atol
     << ")\n";
  for (const DischargedObligation& d : obligations) {
    os << "  " << obligation_name(d.obligation) << ": " << obligation_statement(d.obligation)
       << "\n    ";
    if (d.method == ProofMethod::Cases)
      os << "checked on " << d.cases << " cases: ";
    else
      os << "proved symbolically: ";
    os << d.detail << "\n";
  }
  return os.str();
}

std::string Refutation::str() const {
  return "reduction law '" + law + "' fails " + std::string(obligation_name(obligation)) + " (" +
         std::string(obligation_statement(obligation)) + "): " + counterexample;
}

}  // namespace metile::discovery
