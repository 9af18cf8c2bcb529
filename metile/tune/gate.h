// The numerical gate of the guarded runtime (seed 001, "Guarded Runtime"): before a generated
// candidate is timed, each of its outputs is compared with the native operation's output on
// the same inputs. The error is scale-normalised, max |candidate - native| / scale, where the
// scale is the largest finite |native| value (at least the dtype's smallest normal value, so
// an all-zero output does not divide by zero); it must not exceed the dtype's tolerance
// (gate_tolerance, the table in docs/tuning.md, never widened to let a candidate pass).
//
// NaN and infinity: a position where the native output is NaN passes only if the candidate's
// is NaN too; a native infinity passes only against the same infinity; a NaN or an infinity
// where the native value is finite rejects. The error is measured over the positions where
// both are finite.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace metile::tune {

// The tolerance for outputs of a dtype ("f32", "f16", "bf16", "f64"; integer and bool dtypes
// must match exactly: 0). An unknown dtype is a UserError.
double gate_tolerance(std::string_view dtype);

struct GateResult {
  bool passed = true;
  double error = 0;      // scale-normalised, over the positions finite in both
  double tolerance = 0;  // gate_tolerance(dtype)
  std::string reason;    // why it failed; empty when it passed
};

// Compares one output: both in the native output's element order, widened to double.
GateResult gate_output(std::span<const double> native, std::span<const double> candidate,
                       std::string_view dtype);

}  // namespace metile::tune
