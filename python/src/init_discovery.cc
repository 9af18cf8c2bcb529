// Reduction laws for Python: metile.ReductionLaw (expressions written as text, parsed by
// metile/discovery/parse_expr.h), its verify() returning a Certificate or raising
// LawRefuted (a CompilationError naming the failed obligation and its counterexample).
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include "init.h"
#include "metile/discovery/parse_expr.h"
#include "metile/discovery/reduction_law.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace metile::python {

namespace {
using discovery::Expr;
using discovery::ReductionLaw;

PyObject* law_refuted = nullptr;

// A field given as one string or a sequence of strings.
std::vector<Expr> parse_field(const nb::handle& field) {
  std::vector<Expr> exprs;
  if (nb::isinstance<nb::str>(field)) {
    exprs.push_back(discovery::parse_expr(nb::cast<std::string>(field)));
    return exprs;
  }
  for (nb::handle item : field) exprs.push_back(discovery::parse_expr(nb::cast<std::string>(item)));
  return exprs;
}

std::vector<std::string> texts(const std::vector<Expr>& exprs) {
  std::vector<std::string> out;
  for (const Expr& e : exprs) out.push_back(e.str());
  return out;
}

// Elements: "x", or ("s", "finite_or_neg_inf"); a bare name is finite.
std::vector<discovery::ElementComponent> parse_elements(const nb::handle& element) {
  std::vector<discovery::ElementComponent> out;
  auto one = [&](nb::handle item) {
    if (nb::isinstance<nb::str>(item)) {
      out.push_back({nb::cast<std::string>(item), discovery::Domain::Finite});
      return;
    }
    auto [name, domain] = nb::cast<std::pair<std::string, std::string>>(item);
    out.push_back({name, discovery::parse_domain(domain)});
  };
  if (nb::isinstance<nb::str>(element))
    one(element);
  else
    for (nb::handle item : element) one(item);
  return out;
}

ReductionLaw make_law(std::string name, const nb::handle& state, const nb::handle& element,
                      const nb::handle& identity, const nb::handle& merge, const nb::handle& lift,
                      const nb::handle& finalise, const nb::handle& reference) {
  ReductionLaw law;
  law.name = std::move(name);
  if (nb::isinstance<nb::str>(state))
    law.state = {nb::cast<std::string>(state)};
  else
    law.state = nb::cast<std::vector<std::string>>(state);
  law.element = parse_elements(element);
  law.identity = parse_field(identity);
  law.merge = parse_field(merge);
  law.lift = parse_field(lift);
  law.finalise = parse_field(finalise);
  law.reference = parse_field(reference);
  law.check_well_formed();
  return law;
}

discovery::Certificate verify_or_raise(const ReductionLaw& law, double rtol, double atol) {
  discovery::Verification v = discovery::verify(law, {rtol, atol});
  if (v.verified()) return *v.certificate;
  const discovery::Refutation& r = *v.refutation;
  nb::object error = nb::borrow(law_refuted)(r.str());
  error.attr("law") = r.law;
  error.attr("obligation") = std::string(discovery::obligation_name(r.obligation));
  error.attr("counterexample") = r.counterexample;
  PyErr_SetObject(law_refuted, error.ptr());
  throw nb::python_error();
}

void bind_certificate(nb::module_& m) {
  using D = discovery::DischargedObligation;
  nb::class_<D>(m, "DischargedObligation", "One obligation of a certificate and how it held.")
      .def_prop_ro(
          "name", [](const D& d) { return std::string(discovery::obligation_name(d.obligation)); },
          "'left_identity', 'right_identity', 'associativity', 'pair_homomorphism' or "
          "'list_homomorphism'.")
      .def_prop_ro(
          "statement",
          [](const D& d) { return std::string(discovery::obligation_statement(d.obligation)); },
          "The equation, e.g. 'merge(identity, a) = a'.")
      .def_prop_ro(
          "method", [](const D& d) { return std::string(discovery::proof_method_name(d.method)); },
          "'symbolic' (normal forms agree) or 'cases' (evaluated on the generated case set).")
      .def_ro("cases", &D::cases, "Equalities evaluated; 0 when symbolic.")
      .def_ro("detail", &D::detail, "The normal form, or what the cases were.");
  using C = discovery::Certificate;
  nb::class_<C>(m, "Certificate", "A verified reduction law's proof: its obligations.")
      .def_ro("law", &C::law, "The law's name.")
      .def_ro("obligations", &C::obligations, "The five obligations, in order.")
      .def_prop_ro(
          "rtol", [](const C& c) { return c.tolerance.rtol; }, "Relative tolerance of the cases.")
      .def_prop_ro(
          "atol", [](const C& c) { return c.tolerance.atol; }, "Absolute tolerance of the cases.")
      .def_prop_ro("cases", &C::cases, "Equalities evaluated over all obligations.")
      .def("__str__", &C::str, "Each obligation, its method and cases.");
}

void bind_law(nb::module_& m) {
  nb::class_<ReductionLaw>(
      m, "ReductionLaw",
      "A reduction written as a monoid: identity, merge(a, b), lift(x) and finalise(state), "
      "with the reference computation it replaces. Expressions are text: '+ - * /', max, min, "
      "exp, log, less, equal, select, and list_sum/list_max/list_min in the reference. merge "
      "reads a.<c> and b.<c>, finalise the state names, lift and the reference the element "
      "names. See docs/discovery.md.")
      .def(nb::new_(&make_law), "name"_a, "state"_a, "element"_a, "identity"_a, "merge"_a, "lift"_a,
           "finalise"_a, "reference"_a,
           "A law; each expression field is a string or a sequence of strings, element a name "
           "or a sequence of names or (name, domain) pairs (domain 'finite', "
           "'finite_or_neg_inf' or 'extended'). Malformed laws raise CompilationError.")
      .def_ro("name", &ReductionLaw::name, "The law's name.")
      .def_ro("state", &ReductionLaw::state, "The state component names.")
      .def_prop_ro(
          "element",
          [](const ReductionLaw& l) {
            std::vector<std::pair<std::string, std::string>> out;
            for (const auto& c : l.element)
              out.emplace_back(c.name, std::string(discovery::domain_name(c.domain)));
            return out;
          },
          "The element components as (name, domain) pairs.")
      .def_prop_ro(
          "identity", [](const ReductionLaw& l) { return texts(l.identity); }, "Text.")
      .def_prop_ro(
          "merge", [](const ReductionLaw& l) { return texts(l.merge); }, "Text.")
      .def_prop_ro(
          "lift", [](const ReductionLaw& l) { return texts(l.lift); }, "Text.")
      .def_prop_ro(
          "finalise", [](const ReductionLaw& l) { return texts(l.finalise); }, "Text.")
      .def_prop_ro(
          "reference", [](const ReductionLaw& l) { return texts(l.reference); }, "Text.")
      .def("verify", &verify_or_raise, "rtol"_a = discovery::Tolerance{}.rtol,
           "atol"_a = discovery::Tolerance{}.atol,
           "The certificate when every obligation holds; otherwise raises LawRefuted naming the "
           "obligation and a counterexample.")
      .def("__str__", &ReductionLaw::str, "The law and its obligations.")
      .def("__repr__", [](const ReductionLaw& l) { return "ReductionLaw(" + l.name + ")"; })
      .def_static("sum", &discovery::laws::sum, "Sum: state s, identity 0.")
      .def_static("max", &discovery::laws::max, "Maximum: identity -inf.")
      .def_static("min", &discovery::laws::min, "Minimum: identity +inf.")
      .def_static("online_softmax", &discovery::laws::online_softmax,
                  "The online (maximum, normaliser) of a max pass and a sum-of-exp pass.")
      .def_static("log_sum_exp", &discovery::laws::log_sum_exp, "m + log(d) of online_softmax.")
      .def_static("weighted_softmax", &discovery::laws::weighted_softmax,
                  "Attention's (maximum, normaliser, numerator) over (score, value) elements.")
      .def_static("builtins", &discovery::laws::all, "Every built-in law.");
}
}  // namespace

void init_discovery(nb::module_& m) {
  std::string qualified = "metile._core.LawRefuted";
  law_refuted = PyErr_NewExceptionWithDoc(
      qualified.c_str(),
      "A reduction law failed an obligation. Attributes: law, obligation (its name) and "
      "counterexample (the bindings and both sides' values).",
      m.attr("CompilationError").ptr(), nullptr);
  if (!law_refuted) throw nb::python_error();
  m.attr("LawRefuted") = nb::borrow(law_refuted);
  bind_certificate(m);
  bind_law(m);
}

}  // namespace metile::python
