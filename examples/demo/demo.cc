// The README's first command runs this: each demo kernel is compiled to MSL, executed on
// the default device (the host emulator), and checked against a plain C++ reference.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "metile/support/errors.h"
#include "examples/reference/run_library_kernel.h"

using namespace metile::reference;

namespace {
struct DemoCase {
  std::string label;
  double tolerance;  // max abs error allowed
  std::function<KernelRun()> run;
};
}  // namespace

int main() {
  const std::vector<DemoCase> cases = {
      {"vector_add f32, n = 100000", 0, [] { return run_vector_add(Storage::f32, 100000); }},
      {"vector_add f16, n = 3001", 4e-3, [] { return run_vector_add(Storage::f16, 3001); }},
      {"softmax f32, 64 x 1000", 1e-6, [] { return run_softmax(Storage::f32, 64, 1000); }},
      {"softmax bf16, 16 x 300", 4e-3, [] { return run_softmax(Storage::bf16, 16, 300); }},
      {"rms_norm f16, 32 x 777", 8e-3, [] { return run_rms_norm(Storage::f16, 32, 777); }},
      {"rms_norm f32, 32 x 4096", 1e-5, [] { return run_rms_norm(Storage::f32, 32, 4096); }},
      {"row_sum f32, 64 x 1500", 1e-4, [] { return run_row_sum(Storage::f32, 64, 1500); }},
  };
  std::printf("%-32s %-24s %10s %12s  %s\n", "case", "kernel", "MSL bytes", "max error", "result");
  int failed = 0;
  for (const DemoCase& c : cases) {
    try {
      KernelRun run = c.run();
      const double error = max_abs_error(run.output, run.expected);
      const bool pass = error <= c.tolerance;
      failed += !pass;
      std::printf("%-32s %-24s %10zu %12.3g  %s\n", c.label.c_str(), run.compiled->name().c_str(),
                  run.compiled->source().size(), error, pass ? "PASS" : "FAIL");
    } catch (const std::exception& e) {
      ++failed;
      std::printf("%-32s FAIL: %s\n", c.label.c_str(), e.what());
    }
  }
  std::printf("%s: %d of %zu demo kernels passed\n", failed ? "FAIL" : "PASS",
              static_cast<int>(cases.size()) - failed, cases.size());
  return failed ? 1 : 0;
}
