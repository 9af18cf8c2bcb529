#include "metile/support/debug_dump.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "metile/support/errors.h"

namespace metile {

namespace {
struct KindInfo {
  DumpKind kind;
  const char* name;
  const char* extension;
};
constexpr KindInfo kKinds[] = {
    {DumpKind::TileIR, "tile_ir", "tir"},     {DumpKind::MetalIR, "metal_ir", "mir"},
    {DumpKind::MSL, "msl", "metal"},          {DumpKind::CUDA, "cuda", "cu"},
    {DumpKind::Schedule, "schedule", "json"}, {DumpKind::Tune, "tune", "json"},
};

// The value that turns on a check instead of a dump.
constexpr const char* kBounds = "bounds";

unsigned bit(DumpKind k) {
  return 1u << static_cast<unsigned>(k);
}

unsigned parse_mask(const char* env, bool* bounds = nullptr) {
  unsigned mask = 0;
  if (!env) return 0;
  std::stringstream ss(env);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty() || item == "0") continue;
    if (item == kBounds) {
      if (bounds) *bounds = true;
      continue;
    }
    if (item == "all" || item == "1") {
      mask = ~0u;
      continue;
    }
    bool known = false;
    for (const KindInfo& k : kKinds)
      if (item == k.name) mask |= bit(k.kind), known = true;
    if (!known)
      throw UserError("METILE_DEBUG: unknown value '" + item +
                      "' (expected tile_ir, metal_ir, msl, cuda, schedule, tune, all or bounds)");
  }
  return mask;
}
}  // namespace

bool bounds_checks_requested() {
  bool bounds = false;
  parse_mask(std::getenv("METILE_DEBUG"), &bounds);
  return bounds;
}

DebugDump::DebugDump(std::string kernel_name) : kernel_name_(std::move(kernel_name)) {
  mask_ = parse_mask(std::getenv("METILE_DEBUG"));
  const char* dir = std::getenv("METILE_DEBUG_DIR");
  dir_ = dir && *dir ? dir : "debug_output";
}

bool DebugDump::enabled(DumpKind kind) const {
  return (mask_ & bit(kind)) != 0;
}

void DebugDump::write(DumpKind kind, const std::string& step, const std::string& text) {
  if (!enabled(kind)) return;
  const KindInfo& info = kKinds[static_cast<int>(kind)];
  std::filesystem::path folder = std::filesystem::path(dir_) / kernel_name_;
  std::filesystem::create_directories(folder);
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02d_", counter_++);
  std::filesystem::path file = folder / (prefix + step + "." + info.extension);
  std::ofstream out(file);
  out << text;
  if (!out) throw UserError("METILE_DEBUG: cannot write " + file.string());
}

}  // namespace metile
