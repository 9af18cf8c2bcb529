// The guarded runtime for Python (metile.tune): the numerical gate on one output and the
// selector over entrants whose verdicts Python found (preparing and gating run Python
// callables), timed by a Python timer. The decision comes back as its JSON report.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "init.h"
#include "metile/support/errors.h"
#include "metile/tune/selector.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace metile::python {

namespace {
using Values = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
// name, verdict, detail, gated, gate passed, gate error, gate tolerance, gate reason
using EntrantTuple =
    std::tuple<std::string, std::string, std::string, bool, bool, double, double, std::string>;

tune::Verdict verdict_from_name(const std::string& name) {
  for (tune::Verdict v : {tune::Verdict::Ready, tune::Verdict::GateFailed,
                          tune::Verdict::CompileFailed, tune::Verdict::Unsupported})
    if (tune::verdict_name(v) == name) return v;
  throw nb::value_error(("select: unknown verdict '" + name + "'").c_str());
}

// An unknown dtype is the caller's argument error (ValueError), not a kernel's.
template <typename F>
auto value_errors(F&& f) {
  try {
    return f();
  } catch (const UserError& e) {
    throw nb::value_error(e.what());
  }
}
}  // namespace

void init_tune(nb::module_& m) {
  m.def(
      "gate_tolerance",
      [](const std::string& dtype) {
        return value_errors([&] { return tune::gate_tolerance(dtype); });
      },
      "dtype"_a, "The numerical gate's tolerance for outputs of a dtype (docs/tuning.md).");
  m.def(
      "gate_output",
      [](Values native, Values candidate, const std::string& dtype) {
        const tune::GateResult r = value_errors([&] {
          return tune::gate_output(std::span<const double>(native.data(), native.shape(0)),
                                   std::span<const double>(candidate.data(), candidate.shape(0)),
                                   dtype);
        });
        return std::make_tuple(r.passed, r.error, r.tolerance, r.reason);
      },
      "native"_a, "candidate"_a, "dtype"_a,
      "Gates one output (float64 arrays in the same order): (passed, scale-normalised error, "
      "tolerance, reason).");
  m.def(
      "select",
      [](const std::vector<EntrantTuple>& rows, const std::function<double(size_t)>& timer,
         const std::string& boundary, double headroom, int warmup, int samples, size_t finalists) {
        std::vector<tune::Entrant> entrants;
        for (const auto& [name, verdict, detail, gated, passed, error, tolerance, reason] : rows) {
          tune::Entrant e;
          e.name = name;
          e.verdict = verdict_from_name(verdict);
          e.detail = detail;
          e.gated = gated;
          e.gate = {passed, error, tolerance, reason};
          entrants.push_back(std::move(e));
        }
        if (entrants.empty() || entrants[0].verdict != tune::Verdict::Ready)
          throw nb::value_error("select: the first entrant (the reference) must be ready");
        if (samples <= 0 || finalists == 0 || warmup < 0)
          throw nb::value_error("select: samples and finalists must be positive, warmup >= 0");
        tune::SelectorOptions options;
        options.headroom = boundary.empty() ? headroom : value_errors([&] {
          return tune::boundary_headroom(tune::parse_boundary(boundary));
        });
        options.warmup = warmup;
        options.samples = samples;
        options.finalists = finalists;
        const tune::Decision d = tune::select(entrants, timer, options);
        return std::make_tuple(d.winner, tune::decision_json(entrants, d, options));
      },
      "entrants"_a, "timer"_a, "boundary"_a, "headroom"_a, "warmup"_a, "samples"_a, "finalists"_a,
      "Runs the selector (metile/tune/selector.h): entrants are (name, verdict, detail, "
      "gated, gate passed, gate error, gate tolerance, gate reason), the first the reference; "
      "timer(i) runs "
      "entrant i once, synchronised, and returns seconds. The headroom is the boundary's "
      "('primitive', 'graph', 'quantized_mlp'), or `headroom` when boundary is ''. Returns "
      "(the winner's index, the decision's JSON report).");
}

}  // namespace metile::python
