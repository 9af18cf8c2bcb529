// METILE_DEBUG=tile_ir|metal_ir|msl|cuda|schedule|tune|all (comma-separated): writes the IR after
// each named pipeline step under debug_output/<kernel>/ (DESIGN.md, "Pipeline").
// METILE_DEBUG=bounds is a check, not a dump (so `all` leaves it off): kernels for CUDA check
// every device access against its buffer's extent (docs/reliability.md).
#pragma once

#include <string>

namespace metile {

// Tune: the guarded runtime's decisions, which python/metile/tune/report.py writes; known here
// so that METILE_DEBUG=tune is a valid value for the compiler too.
enum class DumpKind { TileIR, MetalIR, MSL, CUDA, Schedule, Tune };

// Whether METILE_DEBUG names `bounds` (read at each call: a compile's options are resolved when
// it starts). UserError for an unknown value, as DebugDump's.
bool bounds_checks_requested();

class DebugDump {
 public:
  // Reads METILE_DEBUG (and METILE_DEBUG_DIR, default "debug_output") once per instance.
  explicit DebugDump(std::string kernel_name);

  bool enabled(DumpKind kind) const;
  // The folder every dump goes under (METILE_DEBUG_DIR, default "debug_output").
  const std::string& dir() const { return dir_; }
  // Writes <dir>/<kernel>/<NN>_<step>.<ext> when `kind` is enabled; NN counts the files
  // written for this kernel so a directory listing reads in pipeline order.
  void write(DumpKind kind, const std::string& step, const std::string& text);

 private:
  std::string kernel_name_;
  std::string dir_;
  unsigned mask_ = 0;
  int counter_ = 0;
};

}  // namespace metile
