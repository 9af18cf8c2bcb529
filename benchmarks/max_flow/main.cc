// Max-flow benchmark: metile's Dinic, push-relabel and auto dispatch against BGL push-relabel,
// BGL Boykov-Kolmogorov and LEMON Preflow on DIMACS-style families, in one run, order-
// interleaved, repeated (median), with flow values checked equal before any time is kept. It
// also times dispatch on compiler-sized networks (< 32 vertices).
//
//   max_flow_bench [--quick] [--repeats N] [--out PATH]
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "benchmarks/max_flow/external_solvers.h"
#include "benchmarks/max_flow/generators.h"
#include "metile/flow/dispatch.h"
#include "metile/flow/flow_network.h"

namespace {

using namespace metile::flow;
using namespace metile::flow::bench;
using Clock = std::chrono::steady_clock;

struct Options {
  bool quick = false;
  int repeats = 5;
  double max_seconds_per_run = 20.0;  // a solver slower than this is not repeated
  std::string out;
};

struct Contender {
  std::string name;
  bool metile;
  std::function<Capacity()> solve;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double seconds_of(const std::function<Capacity()>& f, Capacity* value) {
  const auto start = Clock::now();
  *value = f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string hostname() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// The instance list: (family, size label, generator).
std::vector<std::pair<std::string, std::function<Instance()>>> instances(bool quick) {
  std::vector<std::pair<std::string, std::function<Instance()>>> out;
  const std::vector<int> arc_targets =
      quick ? std::vector<int>{10000, 100000} : std::vector<int>{10000, 100000, 1000000};
  for (int m : arc_targets) {
    const std::string label = m >= 1000000 ? "1e6" : m >= 100000 ? "1e5" : "1e4";
    // RMF long: frames a x a with b = a^2 frames; wide: b frames with a = b^2 (m ~ 5 a^2 b).
    const int long_a = std::max(2, static_cast<int>(std::lround(std::pow(m / 5.0, 0.25))));
    out.emplace_back(label,
                     [=] { return genrmf("genrmf-long", long_a, long_a * long_a, 1, 10000, m); });
    const int wide_b = std::max(2, static_cast<int>(std::lround(std::pow(m / 5.0, 0.2))));
    out.emplace_back(
        label, [=] { return genrmf("genrmf-wide", wide_b * wide_b, wide_b, 1, 10000, m + 1); });
    // RLG: width = 4 * levels, degree 3 (m ~ 3 * width * levels).
    const int levels = std::max(4, static_cast<int>(std::lround(std::sqrt(m / 12.0))));
    out.emplace_back(label, [=] { return washington_rlg(4 * levels, levels, 3, 10000, m + 2); });
    // AK-style is quadratic for Dinic by design: 1e4 and 1e5 arcs only.
    if (m <= 100000) out.emplace_back(label, [=] { return ak_style(m / 4, m + 3); });
  }
  return out;
}

nlohmann::json bench_instance(const Instance& in, const std::string& label, const Options& opt) {
  std::cerr << "[max_flow] " << in.family << " " << label << ": " << in.network.vertex_count()
            << " vertices, " << in.network.arc_count() << " arcs\n";
  std::vector<std::unique_ptr<ExternalSolver>> externals = make_external_solvers(in);
  std::vector<Contender> contenders;
  contenders.push_back({"dinic", true, [&] {
                          return max_flow(in.network, in.source, in.sink, SolverKind::Dinic).value;
                        }});
  contenders.push_back(
      {"push-relabel", true,
       [&] { return max_flow(in.network, in.source, in.sink, SolverKind::PushRelabel).value; }});
  contenders.push_back(
      {"auto", true, [&] { return max_flow(in.network, in.source, in.sink).value; }});
  for (auto& e : externals) contenders.push_back({e->name(), false, [&e] { return e->solve(); }});

  // The first auto call runs the tournament; it is timed on its own, later calls hit the cache.
  global_dispatch_cache().clear();
  DispatchTrace trace;
  const auto t0 = Clock::now();
  const Capacity auto_value =
      dispatch_max_flow(in.network, in.source, in.sink, global_dispatch_cache(), &trace).value;
  const double tournament_seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  std::map<std::string, std::vector<double>> seconds;
  std::map<std::string, Capacity> values;
  const size_t k = contenders.size();
  for (int rep = 0; rep < opt.repeats; ++rep) {
    for (size_t j = 0; j < k; ++j) {
      // Rotate and alternate the order so no solver always runs first or after the same one.
      const size_t i = rep % 2 == 0 ? (j + rep) % k : (k - 1 - j + rep) % k;
      const Contender& c = contenders[i];
      std::vector<double>& runs = seconds[c.name];
      if (!runs.empty() && runs.back() > opt.max_seconds_per_run) continue;
      Capacity value = 0;
      const double s = seconds_of(c.solve, &value);
      if (values.count(c.name) && values[c.name] != value) values[c.name] = -1;
      values.emplace(c.name, value);
      runs.push_back(s);
    }
    std::cerr << "." << std::flush;
  }
  std::cerr << "\n";

  nlohmann::json j;
  j["family"] = in.family;
  j["size"] = label;
  j["vertices"] = in.network.vertex_count();
  j["arcs"] = in.network.arc_count();
  j["flow"] = auto_value;
  j["auto_solver"] = trace.solver;
  j["auto_first_call_ms"] = tournament_seconds * 1e3;
  for (const auto& [name, median_s] : trace.median_seconds)
    j["tournament_median_ms"][name] = median_s * 1e3;
  bool agree = true;
  for (const auto& [name, v] : values) agree = agree && v == auto_value;
  j["flows_agree"] = agree;
  double best_external = INFINITY;
  for (const Contender& c : contenders) {
    j["runs_ms"][c.name] = nlohmann::json::array();
    for (double s : seconds[c.name]) j["runs_ms"][c.name].push_back(s * 1e3);
    const double m = median(seconds[c.name]);
    j["median_ms"][c.name] = m * 1e3;
    if (!c.metile) best_external = std::min(best_external, m);
  }
  if (!agree) {
    for (const auto& [name, v] : values) j["flow_by_solver"][name] = v;
    std::cerr << "[max_flow] FLOW MISMATCH on " << in.family << " " << label
              << "; timings rejected\n";
  } else {
    j["ratio_auto_over_best_external"] = median(seconds["auto"]) / best_external;
  }
  return j;
}

nlohmann::json bench_compiler_sized(const Options& opt) {
  const int count = opt.quick ? 100 : 400;
  std::cerr << "[max_flow] compiler-sized: " << count << " networks of 8-30 vertices\n";
  std::vector<Instance> nets;
  for (int i = 0; i < count; ++i) nets.push_back(compiler_sized(8 + i % 23, 1000 + i));
  const std::vector<std::string> names = {
      "auto",         "dinic", "push-relabel", "bgl-push-relabel", "bgl-boykov-kolmogorov",
      "lemon-preflow"};
  std::map<std::string, std::vector<double>> per_network_us;  // median over repeats, per network
  const int inner = 20;  // solves per timing sample: single solves are a few microseconds
  for (const Instance& in : nets) {
    auto externals = make_external_solvers(in);
    std::vector<std::function<Capacity()>> solve = {
        [&] { return max_flow(in.network, in.source, in.sink).value; },
        [&] { return max_flow(in.network, in.source, in.sink, SolverKind::Dinic).value; },
        [&] { return max_flow(in.network, in.source, in.sink, SolverKind::PushRelabel).value; },
        [&] { return externals[0]->solve(); },
        [&] { return externals[1]->solve(); },
        [&] { return externals[2]->solve(); }};
    const Capacity want = solve[1]();
    for (size_t i = 0; i < solve.size(); ++i)
      if (solve[i]() != want) {
        std::cerr << "[max_flow] FLOW MISMATCH on a compiler-sized network (" << names[i] << ")\n";
        return {{"error", "flow mismatch"}};
      }
    std::map<std::string, std::vector<double>> samples;
    for (int rep = 0; rep < opt.repeats; ++rep)
      for (size_t j = 0; j < solve.size(); ++j) {
        const size_t i = rep % 2 == 0 ? j : solve.size() - 1 - j;
        const auto start = Clock::now();
        for (int r = 0; r < inner; ++r) (void)solve[i]();
        samples[names[i]].push_back(
            std::chrono::duration<double, std::micro>(Clock::now() - start).count() / inner);
      }
    for (const auto& [name, s] : samples) per_network_us[name].push_back(median(s));
  }
  nlohmann::json j;
  j["networks"] = count;
  j["vertices"] = "8-30";
  for (const auto& [name, v] : per_network_us) j["median_us"][name] = median(v);
  std::cerr << "\n";
  return j;
}

void print_table(const nlohmann::json& report) {
  std::printf("\n%-15s %-5s %9s %9s | %9s %9s %9s | %9s %9s %9s | %-12s %7s\n", "family", "size",
              "vertices", "arcs", "dinic", "push-rel", "auto", "bgl-pr", "bgl-bk", "lemon",
              "auto picks", "ratio");
  for (const auto& r : report["instances"]) {
    auto ms = [&](const char* k) { return r["median_ms"][k].get<double>(); };
    std::printf(
        "%-15s %-5s %9d %9d | %9.2f %9.2f %9.2f | %9.2f %9.2f %9.2f | %-12s %7s\n",
        r["family"].get<std::string>().c_str(), r["size"].get<std::string>().c_str(),
        r["vertices"].get<int>(), r["arcs"].get<int>(), ms("dinic"), ms("push-relabel"), ms("auto"),
        ms("bgl-push-relabel"), ms("bgl-boykov-kolmogorov"), ms("lemon-preflow"),
        r["auto_solver"].get<std::string>().c_str(),
        r.contains("ratio_auto_over_best_external")
            ? std::to_string(r["ratio_auto_over_best_external"].get<double>()).substr(0, 5).c_str()
            : "MISMATCH");
  }
  std::printf(
      "(times: median ms over repeats; ratio = auto / best(BGL, LEMON); auto is the cached "
      "dispatch,\n"
      " its first call, which runs the tournament, is auto_first_call_ms in the JSON)\n");
  const auto& c = report["compiler_sized"];
  if (c.contains("median_us")) {
    std::printf(
        "\ncompiler-sized networks (%d, 8-30 vertices), median solve time in microseconds:\n",
        c["networks"].get<int>());
    for (const auto& [name, us] : c["median_us"].items())
      std::printf("  %-22s %8.2f us\n", name.c_str(), us.get<double>());
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      opt.quick = true;
    } else if (arg == "--repeats" && i + 1 < argc) {
      opt.repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--out" && i + 1 < argc) {
      opt.out = argv[++i];
    } else if (arg == "--help" || arg == "-h") {
      std::printf(
          "usage: max_flow_bench [--quick] [--repeats N] [--out PATH]\n"
          "default --out: benchmarks/results/<hostname>-max_flow.json\n");
      return 0;
    } else {
      std::fprintf(stderr, "max_flow_bench: unknown argument '%s' (try --help)\n", arg.c_str());
      return 2;
    }
  }
  if (opt.out.empty()) opt.out = "benchmarks/results/" + hostname() + "-max_flow.json";

  nlohmann::json report;
  report["benchmark"] = "max_flow";
  report["host"] = hostname();
  report["quick"] = opt.quick;
  report["repeats"] = opt.repeats;
  report["timing"] =
      "metile times include building the residual graph from the FlowNetwork; external solvers' "
      "graphs are "
      "built once outside the timed region. lemon-preflow runs runMinCut (value and a min cut).";
  report["instances"] = nlohmann::json::array();
  bool all_agree = true;
  for (const auto& [label, make] : instances(opt.quick)) {
    const Instance in = make();
    nlohmann::json r = bench_instance(in, label, opt);
    all_agree = all_agree && r["flows_agree"].get<bool>();
    report["instances"].push_back(std::move(r));
  }
  report["compiler_sized"] = bench_compiler_sized(opt);
  std::ofstream(opt.out) << report.dump(2) << "\n";
  std::cerr << "[max_flow] wrote " << opt.out << "\n";
  print_table(report);
  return all_agree ? 0 : 1;
}
