// verify(law): every obligation symbolically when the normal forms decide it, otherwise on
// the generated cases (law_cases.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <sstream>

#include "metile/discovery/law_cases.h"
#include "metile/discovery/reduction_law.h"
#include "metile/discovery/symbolic.h"
#include "metile/support/errors.h"

namespace metile::discovery {

namespace {

using State = std::vector<double>;
using Terms = std::vector<Expr>;

// Symbolic lists for the list obligation: every length up to this, every split.
constexpr int kSymbolicListLength = 4;
// States the identity and associativity cases range over: the identity, every element's
// lift, and the states of this many generated lists.
constexpr int kPoolLists = 8;

std::string number(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}

// The largest |component|, NaN and infinities counting as infinite.
double magnitude(const State& s) {
  double m = 0;
  for (double v : s) m = std::max(m, std::isnan(v) ? HUGE_VAL : std::abs(v));
  return m;
}

class Checker {
 public:
  Checker(const ReductionLaw& law, const Tolerance& tolerance)
      : law_(law), tolerance_(tolerance), cases_(generate_cases(law)) {
    for (const Expr& e : law_.identity) identity_.push_back(e.value());
    pool_.push_back(identity_);
    for (const Element& x : cases_.elements) pool_.push_back(lift(x));
    size_t first_random = cases_.elements.size() * (cases_.elements.size() + 1);
    for (size_t i = 0; i < kPoolLists && first_random + i < cases_.lists.size(); ++i)
      pool_.push_back(fold(cases_.lists[first_random + i]));
    // Smallest magnitudes first (the identity stays first), so the first counterexample found
    // is a readable one rather than an overflow.
    std::stable_sort(pool_.begin() + 1, pool_.end(),
                     [](const State& x, const State& y) { return magnitude(x) < magnitude(y); });
  }

  // Returns the discharged obligation, or sets `refutation`.
  std::optional<DischargedObligation> discharge(Obligation o,
                                                std::optional<Refutation>& refutation) {
    if (auto proof = symbolic(o)) return DischargedObligation{o, ProofMethod::Symbolic, 0, *proof};
    failure_.clear();
    int checked = 0;
    std::string detail = on_cases(o, checked);
    if (!failure_.empty()) {
      refutation = Refutation{law_.name, o, failure_};
      return std::nullopt;
    }
    return DischargedObligation{o, ProofMethod::Cases, checked, detail};
  }

 private:
  // ---- concrete evaluation
  // The merge is evaluated most (associativity alone takes 4 per triple), so its bindings are
  // made once and only their values change.
  State merge(const State& a, const State& b) const {
    if (merge_a_.empty())
      for (const std::string& c : law_.state) {
        merge_a_.push_back(&merge_env_.vars["a." + c]);
        merge_b_.push_back(&merge_env_.vars["b." + c]);
      }
    for (size_t i = 0; i < law_.state.size(); ++i) {
      *merge_a_[i] = a[i];
      *merge_b_[i] = b[i];
    }
    State out;
    for (const Expr& e : law_.merge) out.push_back(evaluate(e, merge_env_));
    return out;
  }
  State lift(const Element& x) const {
    Env env{x, {}};
    State out;
    for (const Expr& e : law_.lift) out.push_back(evaluate(e, env));
    return out;
  }
  State fold(const std::vector<Element>& xs) const {
    State s = identity_;
    for (const Element& x : xs) s = merge(s, lift(x));
    return s;
  }
  std::vector<double> finalise(const State& s) const {
    Env env;
    for (size_t i = 0; i < law_.state.size(); ++i) env.vars[law_.state[i]] = s[i];
    std::vector<double> out;
    for (const Expr& e : law_.finalise) out.push_back(evaluate(e, env));
    return out;
  }
  std::vector<double> reference(const std::vector<Element>& xs) const {
    Env env{{}, xs};
    std::vector<double> out;
    for (const Expr& e : law_.reference) out.push_back(evaluate(e, env));
    return out;
  }

  // ---- text of concrete values, for counterexamples
  std::string state_text(const State& s) const {
    std::string t = "(";
    for (size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + law_.state[i] + "=" + number(s[i]);
    return t + ")";
  }
  static std::string values_text(const std::vector<double>& v) {
    std::string t = "(";
    for (size_t i = 0; i < v.size(); ++i) t += (i ? ", " : "") + number(v[i]);
    return t + ")";
  }
  std::string list_text(const std::vector<Element>& xs) const {
    std::string t = "[";
    for (size_t i = 0; i < xs.size(); ++i) {
      t += i ? ", " : "";
      if (law_.element.size() == 1) {
        t += number(xs[i].begin()->second);
        continue;
      }
      t += "(";
      for (size_t k = 0; k < law_.element.size(); ++k)
        t += (k ? ", " : "") + law_.element[k].name + "=" + number(xs[i].at(law_.element[k].name));
      t += ")";
    }
    return t + "]";
  }

  // Records the first disagreement; true when `l` and `r` agree.
  // `bindings` makes the counterexample's text, only when there is one.
  template <typename Bindings>
  bool agree(const std::vector<double>& l, const std::vector<double>& r, const Bindings& bindings,
             const char* lhs, const char* rhs) {
    for (size_t i = 0; i < l.size(); ++i)
      if (!tolerance_.agree(l[i], r[i])) {
        if (failure_.empty())
          failure_ = bindings() + ": " + lhs + " = " + values_text(l) + ", " + rhs + " = " +
                     values_text(r);
        return false;
      }
    return true;
  }

  std::string on_cases(Obligation o, int& checked) {
    switch (o) {
      case Obligation::LeftIdentity:
      case Obligation::RightIdentity: {
        bool left = o == Obligation::LeftIdentity;
        for (const State& a : pool_) {
          ++checked;
          State got = left ? merge(identity_, a) : merge(a, identity_);
          if (!agree(
                  got, a, [&] { return "a = " + state_text(a); },
                  left ? "merge(identity, a)" : "merge(a, identity)", "a"))
            break;
        }
        return "every state of the pool (" + std::to_string(pool_.size()) +
               ": the identity, each element's lift, " + std::to_string(kPoolLists) +
               " generated lists' states)";
      }
      case Obligation::Associativity: {
        // Triples in order of their largest pool index, so small states are tried first.
        const size_t n = pool_.size();
        for (size_t k = 0; k < n; ++k)
          for (size_t i = 0; i <= k; ++i)
            for (size_t j = 0; j <= k; ++j)
              for (size_t l = 0; l <= k; ++l) {
                if (std::max({i, j, l}) != k) continue;
                if (!failure_.empty()) return "";
                const State &a = pool_[i], &b = pool_[j], &c = pool_[l];
                ++checked;
                agree(
                    merge(merge(a, b), c), merge(a, merge(b, c)),
                    [&] {
                      return "a = " + state_text(a) + ", b = " + state_text(b) +
                             ", c = " + state_text(c);
                    },
                    "merge(merge(a, b), c)", "merge(a, merge(b, c))");
              }
        return "every triple of pool states (" + std::to_string(pool_.size()) + " states)";
      }
      case Obligation::PairHomomorphism: {
        for (const Element& x : cases_.elements)
          for (const Element& y : cases_.elements) {
            std::vector<Element> pair{x, y};
            if (!in_domain(law_, pair)) continue;
            ++checked;
            if (!agree(
                    finalise(merge(lift(x), lift(y))), reference(pair),
                    [&] { return "[x, y] = " + list_text(pair); },
                    "finalise(merge(lift(x), lift(y)))", "reference([x, y])"))
              return "";
          }
        return "every ordered pair of the " + std::to_string(cases_.elements.size()) +
               " elements in the law's domain";
      }
      case Obligation::ListHomomorphism: {
        for (const std::vector<Element>& xs : cases_.lists) {
          State whole = fold(xs);
          for (size_t k = 1; k < xs.size(); ++k) {
            std::vector<Element> ys(xs.begin(), xs.begin() + k), zs(xs.begin() + k, xs.end());
            ++checked;
            if (!agree(
                    merge(fold(ys), fold(zs)), whole,
                    [&] { return "ys = " + list_text(ys) + ", zs = " + list_text(zs); },
                    "merge(state(ys), state(zs))", "state(ys ++ zs)"))
              return "";
          }
          if (!in_domain(law_, xs)) continue;
          ++checked;
          if (!agree(
                  finalise(whole), reference(xs), [&] { return "xs = " + list_text(xs); },
                  "finalise(state(xs))", "reference(xs)"))
            return "";
        }
        return std::to_string(cases_.lists.size()) + " lists (each element, each ordered pair, " +
               std::to_string(kRandomLists) + " generated of length 3 to " +
               std::to_string(kMaxListLength) +
               "), every split, the reference on those in the law's domain";
      }
    }
    throw InternalError("on_cases: unknown obligation");
  }

  // ---- symbolic
  Terms sym_state(const std::string& prefix) const {
    Terms t;
    for (const std::string& c : law_.state) t.push_back(Expr::var(prefix + "." + c));
    return t;
  }
  Terms sym_identity() const { return law_.identity; }
  Terms sym_merge(const Terms& a, const Terms& b) const {
    std::map<std::string, Expr> bind;
    for (size_t i = 0; i < law_.state.size(); ++i) {
      bind.emplace("a." + law_.state[i], a[i]);
      bind.emplace("b." + law_.state[i], b[i]);
    }
    Terms out;
    for (const Expr& e : law_.merge) out.push_back(substitute(e, bind));
    return out;
  }
  std::map<std::string, Expr> sym_element(int index) const {
    std::map<std::string, Expr> x;
    for (const ElementComponent& c : law_.element)
      x.emplace(c.name, Expr::var(c.name + "[" + std::to_string(index) + "]"));
    return x;
  }
  Terms sym_lift(int index) const {
    Terms out;
    for (const Expr& e : law_.lift) out.push_back(substitute(e, sym_element(index)));
    return out;
  }
  Terms sym_fold(int first, int last) const {  // elements first..last-1
    Terms s = sym_identity();
    for (int i = first; i < last; ++i) s = sym_merge(s, sym_lift(i));
    return s;
  }
  Terms sym_finalise(const Terms& s) const {
    std::map<std::string, Expr> bind;
    for (size_t i = 0; i < law_.state.size(); ++i) bind.emplace(law_.state[i], s[i]);
    Terms out;
    for (const Expr& e : law_.finalise) out.push_back(substitute(e, bind));
    return out;
  }
  Terms sym_reference(int length) const {
    std::vector<std::map<std::string, Expr>> list;
    for (int i = 0; i < length; ++i) list.push_back(sym_element(i + 1));
    Terms out;
    for (const Expr& e : law_.reference) out.push_back(expand_lists(e, list));
    return out;
  }
  static bool same(const Terms& l, const Terms& r, std::string* form = nullptr) {
    for (size_t i = 0; i < l.size(); ++i) {
      std::string nl = normal_form(l[i]);
      if (nl != normal_form(r[i])) return false;
      if (form) *form += (form->empty() ? "" : "; ") + nl;
    }
    return true;
  }

  std::optional<std::string> symbolic(Obligation o) const {
    std::string form;
    switch (o) {
      case Obligation::LeftIdentity:
        if (!same(sym_merge(sym_identity(), sym_state("a")), sym_state("a"), &form)) return {};
        return "both sides normalise to " + form;
      case Obligation::RightIdentity:
        if (!same(sym_merge(sym_state("a"), sym_identity()), sym_state("a"), &form)) return {};
        return "both sides normalise to " + form;
      case Obligation::Associativity: {
        Terms a = sym_state("a"), b = sym_state("b"), c = sym_state("c");
        if (!same(sym_merge(sym_merge(a, b), c), sym_merge(a, sym_merge(b, c)), &form)) return {};
        return "both sides normalise to " + form;
      }
      case Obligation::PairHomomorphism:
        if (!same(sym_finalise(sym_merge(sym_lift(1), sym_lift(2))), sym_reference(2), &form))
          return {};
        return "both sides normalise to " + form;
      case Obligation::ListHomomorphism:
        for (int n = 1; n <= kSymbolicListLength; ++n) {
          Terms whole = sym_fold(1, n + 1);
          for (int k = 1; k < n; ++k)
            if (!same(sym_merge(sym_fold(1, k + 1), sym_fold(k + 1, n + 1)), whole)) return {};
          form.clear();
          if (!same(sym_finalise(whole), sym_reference(n), &form)) return {};
        }
        return "lists of length 1 to " + std::to_string(kSymbolicListLength) +
               " with every split; at length " + std::to_string(kSymbolicListLength) +
               " both sides normalise to " + form;
    }
    throw InternalError("symbolic: unknown obligation");
  }

  const ReductionLaw& law_;
  Tolerance tolerance_;
  LawCases cases_;
  State identity_;
  std::vector<State> pool_;  // pool_[0] is the identity
  mutable Env merge_env_;
  mutable std::vector<double*> merge_a_, merge_b_;  // into merge_env_.vars (nodes are stable)
  std::string failure_;
};

Verification verify_uncached(const ReductionLaw& law, const Tolerance& tolerance) {
  Checker checker(law, tolerance);
  Verification result;
  Certificate certificate{law.name, {}, tolerance};
  for (Obligation o : kObligations) {
    std::optional<DischargedObligation> done = checker.discharge(o, result.refutation);
    if (!done) return result;
    certificate.obligations.push_back(std::move(*done));
  }
  result.certificate = std::move(certificate);
  return result;
}

}  // namespace

Verification verify(const ReductionLaw& law, const Tolerance& tolerance) {
  law.check_well_formed();
  // The cases take tens of milliseconds for a transcendental law; passes that verify the same
  // law on every compile get the first answer.
  static std::mutex mutex;
  static std::map<std::string, Verification> cache;
  std::ostringstream key;
  key.precision(17);
  key << law.str() << tolerance.rtol << " " << tolerance.atol;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(key.str());
  if (it == cache.end()) it = cache.emplace(key.str(), verify_uncached(law, tolerance)).first;
  return it->second;
}

}  // namespace metile::discovery
