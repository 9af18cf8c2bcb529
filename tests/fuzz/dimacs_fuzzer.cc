// libFuzzer harness: DIMACS text -> the reader -> Dinic and push-relabel, which must agree on
// the flow value, on unboundedness, and on whether the problem is refused. Bad input must end
// in a UserError; a crash, a disagreement or an InternalError is a finding (abort).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

#include "metile/flow/dimacs.h"
#include "metile/flow/flow_network.h"
#include "metile/support/errors.h"

namespace {

[[noreturn]] void finding(const std::string& what, const std::string& text) {
  std::fprintf(stderr, "dimacs_fuzzer: %s\n--- input ---\n%s\n", what.c_str(), text.c_str());
  std::abort();
}

// The solution, or nullopt when the solver refused the problem with a UserError.
std::optional<metile::flow::MaxFlowResult> solve(const metile::flow::DimacsProblem& p,
                                                 metile::flow::SolverKind kind) {
  try {
    return metile::flow::max_flow(p.network, p.source, p.sink, kind);
  } catch (const metile::UserError&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace metile::flow;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    DimacsProblem problem;
    try {
      std::istringstream in(text);
      problem = read_dimacs_max_flow(in, "<fuzz>");
    } catch (const metile::UserError&) {
      return 0;
    }
    const auto dinic = solve(problem, SolverKind::Dinic);
    const auto push_relabel = solve(problem, SolverKind::PushRelabel);
    if (dinic.has_value() != push_relabel.has_value())
      finding("only one solver refused the problem", text);
    if (!dinic) return 0;
    if (dinic->value != push_relabel->value || dinic->unbounded != push_relabel->unbounded)
      finding("dinic says " + std::to_string(dinic->value) + ", push-relabel " +
                  std::to_string(push_relabel->value),
              text);
  } catch (const metile::InternalError& e) {
    finding(e.what(), text);
  }
  return 0;
}
