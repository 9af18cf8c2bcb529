// Issue figures for the compiler spine: compile latency from Tile IR to MSL (median over
// repeats, per library kernel) and host-emulator wall time for softmax on 256 x 4096 f32.
// Usage: metile-bench-compile [--repeats N] [--out FILE.json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "examples/reference/run_library_kernel.h"
#include "metile/kernels/kernels.h"
#include "metile/pipeline.h"

namespace {
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string hostname() {
  char name[256] = "unknown";
  gethostname(name, sizeof name - 1);
  return name;
}
}  // namespace

int main(int argc, char** argv) {
  int repeats = 50;
  std::string out = "benchmarks/results/" + hostname() + "-compile_latency.json";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeats") && i + 1 < argc)
      repeats = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--repeats N] [--out FILE.json]\n", argv[0]);
      return 2;
    }
  }
  using metile::ir::DType;
  struct Case {
    const char* name;
    metile::ir::Kernel kernel;
  };
  std::vector<Case> cases = {{"vector_add_f32", metile::kernels::vector_add(DType::f32)},
                             {"softmax_f32", metile::kernels::softmax(DType::f32)},
                             {"rms_norm_f16", metile::kernels::rms_norm(DType::f16)},
                             {"row_sum_f32", metile::kernels::row_sum(DType::f32)}};
  nlohmann::json result;
  result["machine"] = hostname();
  result["repeats"] = repeats;
  std::printf("compile latency, Tile IR -> MSL (median of %d)\n", repeats);
  for (const Case& c : cases) {
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
      auto start = Clock::now();
      metile::PipelineResult res = metile::compile_to_source(c.kernel);
      times.push_back(ms_since(start));
      if (res.emitted.source.empty()) return 1;
    }
    const double m = median(times);
    result["compile_ms"][c.name] = {
        {"median", m}, {"min", *std::min_element(times.begin(), times.end())}, {"samples", times}};
    std::printf("  %-16s %8.3f ms\n", c.name, m);
  }

  // Host emulator: compile and a first, checked launch are excluded; the figure is the
  // median wall time of the launch itself.
  using metile::reference::Storage;
  auto first = metile::reference::run_softmax(Storage::f32, 256, 4096);
  const double error = metile::reference::max_abs_error(first.output, first.expected);
  std::vector<double> walls;
  for (int r = 0; r < 5; ++r) {
    walls.push_back(metile::reference::run_softmax(Storage::f32, 256, 4096).launch_ms);
  }
  result["host_softmax_256x4096_f32"] = {
      {"median_ms", median(walls)},
      {"samples_ms", walls},
      {"max_abs_error", error},
      {"includes", "the launch and the copies of x and y in and out of device buffers"}};
  std::printf("host emulator, softmax 256 x 4096 f32: %.1f ms (median of 5; max error %.3g)\n",
              median(walls), error);
  std::ofstream(out) << result.dump(2) << "\n";
  std::printf("raw figures: %s\n", out.c_str());
  return error < 1e-6 ? 0 : 1;
}
