#include "metile/tune/gate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "metile/support/errors.h"

namespace metile::tune {

namespace {
struct DtypeRule {
  std::string_view dtype;
  double tolerance;
  double smallest_normal;  // the least scale an output is normalised by
};
// f16 and bf16: four units in the last place at the output's scale (4 * 2^-10, 4 * 2^-7), room
// for a kernel rounding once from FP32 what the framework rounds step by step; f32 and f64:
// room for another summation order over long rows. Never room for a wrong result.
// docs/tuning.md has the same table.
constexpr DtypeRule kRules[] = {
    {"f64", 1e-12, 2.2250738585072014e-308},
    {"f32", 1e-5, 1.1754943508222875e-38},
    {"f16", 4e-3, 6.103515625e-05},
    {"bf16", 3.2e-2, 1.1754943508222875e-38},
    {"i64", 0, 1},
    {"i32", 0, 1},
    {"u32", 0, 1},
    {"i8", 0, 1},
    {"u8", 0, 1},
    {"i16", 0, 1},
    {"u16", 0, 1},
    // One unit in the last place at the output's scale (2^-3, 2^-2): fp8 outputs are rounded
    // once from a wider float, where the order of operations can move them by one step.
    {"f8e4m3", 0.125, 0.015625},
    {"f8e5m2", 0.25, 6.103515625e-05},
    {"i1", 0, 1},
};

const DtypeRule& rule(std::string_view dtype) {
  for (const DtypeRule& r : kRules)
    if (r.dtype == dtype) return r;
  throw UserError("numerical gate: no tolerance for dtype '" + std::string(dtype) +
                  "' (f64, f32, f16, bf16, f8e4m3, f8e5m2, i64, i32, u32, i16, u16, i8, u8 "
                  "and i1 have one)");
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", v);
  return text;
}

std::string at(size_t i, double native, double candidate) {
  return "at element " + std::to_string(i) + " (native " + number(native) + ", candidate " +
         number(candidate) + ")";
}
}  // namespace

double gate_tolerance(std::string_view dtype) {
  return rule(dtype).tolerance;
}

GateResult gate_output(std::span<const double> native, std::span<const double> candidate,
                       std::string_view dtype) {
  const DtypeRule& r = rule(dtype);
  GateResult result;
  result.tolerance = r.tolerance;
  auto reject = [&](std::string why) {
    result.passed = false;
    result.error = std::numeric_limits<double>::infinity();
    result.reason = std::move(why);
    return result;
  };
  if (native.size() != candidate.size())
    return reject("the candidate has " + std::to_string(candidate.size()) +
                  " elements, the native output " + std::to_string(native.size()));
  double scale = r.smallest_normal;
  for (double n : native)
    if (std::isfinite(n)) scale = std::max(scale, std::abs(n));
  double worst = 0;
  for (size_t i = 0; i < native.size(); ++i) {
    const double n = native[i], c = candidate[i];
    if (std::isnan(n)) {
      if (!std::isnan(c)) return reject("no NaN where the native output has one " + at(i, n, c));
      continue;
    }
    if (std::isnan(c)) return reject("a NaN where the native output is a number " + at(i, n, c));
    if (std::isinf(n) || std::isinf(c)) {
      if (n != c) return reject("an infinity that does not match " + at(i, n, c));
      continue;
    }
    worst = std::max(worst, std::abs(c - n) / scale);
  }
  result.error = worst;
  if (worst > r.tolerance) {
    result.passed = false;
    result.reason = "scale-normalised error " + number(worst) + " exceeds the " +
                    std::string(dtype) + " tolerance " + number(r.tolerance);
  }
  return result;
}

}  // namespace metile::tune
