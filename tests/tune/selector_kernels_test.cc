// The C++ selector over generated candidates: the library's vector add compiled at several
// blocks for the host device (one that cannot compile), each launched on the same inputs and
// gated against a plain C++ native add, then timed by a fake clock that launches the bound
// kernel (a prepared dispatch) and reports synthetic seconds.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "metile/compile.h"
#include "metile/kernels/vector_add.h"
#include "metile/support/errors.h"
#include "metile/tune/selector.h"

namespace metile::tune {
namespace {

constexpr int64_t kN = 1000;

struct Generated {
  std::shared_ptr<const CompiledKernel> kernel;
  int64_t block = 0;
  std::vector<float> out = std::vector<float>(kN);
};

TEST(SelectorOnKernels, GatesCompiledCandidatesAndTimesTheReadyOnes) {
  std::vector<float> x(kN), y(kN), native(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = 0.5f * i, y[i] = 3.0f - i;
  auto native_add = [&] {
    for (int64_t i = 0; i < kN; ++i) native[i] = x[i] + y[i];
  };
  native_add();
  auto launch = [&](Generated& g) {  // the kernel bound to its arguments: a prepared dispatch
    const KernelArg args[] = {BufferView{x.data(), kN * 4, ir::DType::f32},
                              BufferView{y.data(), kN * 4, ir::DType::f32},
                              BufferView{g.out.data(), kN * 4, ir::DType::f32}, kN};
    g.kernel->launch({(kN + g.block - 1) / g.block, 1, 1}, args);
  };
  std::vector<Entrant> entrants(1);
  entrants[0].name = "native";
  std::vector<Generated> generated;
  for (int64_t block : {256, 3, 1024}) {
    Entrant e;
    e.name = "vector_add[BLOCK=" + std::to_string(block) + "]";
    Generated g;
    g.block = block;
    try {
      g.kernel = compile(kernels::vector_add(ir::DType::f32, block));
    } catch (const UserError& error) {
      e.verdict = Verdict::CompileFailed;
      e.detail = error.what();
    }
    if (g.kernel) {
      launch(g);
      const std::vector<double> want(native.begin(), native.end()), got(g.out.begin(), g.out.end());
      e.gated = true;
      e.gate = gate_output(want, got, "f32");
      if (!e.gate.passed) e.verdict = Verdict::GateFailed;
    }
    entrants.push_back(e);
    generated.push_back(std::move(g));
  }
  EXPECT_EQ(entrants[1].verdict, Verdict::Ready);
  EXPECT_EQ(entrants[2].verdict, Verdict::CompileFailed);
  EXPECT_EQ(entrants[3].verdict, Verdict::Ready);
  EXPECT_EQ(entrants[3].gate.error, 0.0);

  std::vector<int> launches(entrants.size(), 0);
  const double seconds[] = {2.0, 1.5, 0, 1.0};
  auto timer = [&](size_t i) {
    ++launches[i];
    if (i == 0) {
      native_add();
    } else {
      launch(generated[i - 1]);
    }
    return seconds[i];
  };
  SelectorOptions options;
  options.samples = 3;
  const Decision d = select(entrants, timer, options);
  EXPECT_EQ(d.winner, 3u);
  EXPECT_EQ(launches[2], 0);  // the candidate that failed to compile is never run
  EXPECT_EQ(launches[0] + launches[1] + launches[3], d.timings);
  EXPECT_NE(d.reason.find("vector_add[BLOCK=1024] chosen: it won 2 of 2 finalist rounds with "
                          "the 5% headroom"),
            std::string::npos);
  EXPECT_NE(d.reason.find("; also candidate vector_add[BLOCK=3] failed to compile: "),
            std::string::npos);
}

}  // namespace
}  // namespace metile::tune
