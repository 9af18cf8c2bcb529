// Every limit and capability a pass or planner may consult (DESIGN.md, "Targets"). No pass
// writes these numbers as literals.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace metile::target {

enum class Language { MSL, CUDA };

struct Target {
  std::string name;            // "apple-m3", "sm90", "host"
  Language language = Language::MSL;
  int msl_version_major = 3;   // MSL targets: 3.0 (M1, M2) or 3.1+ (bf16)
  int msl_version_minor = 0;
  int simd_width = 32;
  int max_threads_per_threadgroup = 1024;
  int64_t threadgroup_memory_bytes = 32768;
  int registers_per_thread = 128;  // 32-bit registers a thread may hold before spilling
  bool supports_bf16 = false;
  bool has_simdgroup_matrix = true;  // 8x8 simdgroup matrices
  bool has_tensor_ops = false;       // Metal 4 tensor ops (M5)
  // Cost model inputs for planners.
  double launch_cost_us = 5.0;           // fixed cost of one kernel launch
  double memory_bandwidth_gbps = 100.0;  // sustained device-memory bandwidth
};

// The named targets: apple-m1 ... apple-m5, sm90, host. Throws UserError on an unknown name
// listing the known ones.
const Target& target_by_name(std::string_view name);
std::vector<std::string> target_names();
// The default device's target: the host emulator, which executes the MSL of an Apple target.
const Target& default_target();

}  // namespace metile::target
