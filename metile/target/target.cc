#include "metile/target/target.h"

#include "metile/support/errors.h"

namespace metile::target {

namespace {
Target apple(std::string name, int msl_minor, bool bf16, bool tensor_ops, double bandwidth) {
  Target t;
  t.name = std::move(name);
  t.language = Language::MSL;
  t.msl_version_major = 3;
  t.msl_version_minor = msl_minor;
  t.supports_bf16 = bf16;
  t.has_tensor_ops = tensor_ops;
  t.memory_bandwidth_gbps = bandwidth;
  t.launch_cost_us = 5.0;
  return t;
}

std::vector<Target> make_targets() {
  std::vector<Target> ts;
  ts.push_back(apple("apple-m1", 0, false, false, 68));
  ts.push_back(apple("apple-m2", 0, false, false, 100));
  ts.push_back(apple("apple-m3", 1, true, false, 100));
  ts.push_back(apple("apple-m4", 2, true, false, 120));
  ts.push_back(apple("apple-m5", 2, true, true, 153));
  Target sm90;
  sm90.name = "sm90";
  sm90.language = Language::CUDA;
  sm90.simd_width = 32;
  sm90.max_threads_per_threadgroup = 1024;
  sm90.threadgroup_memory_bytes = 227 * 1024;
  sm90.registers_per_thread = 255;
  sm90.supports_bf16 = true;
  sm90.has_simdgroup_matrix = false;
  sm90.launch_cost_us = 3.0;
  sm90.memory_bandwidth_gbps = 4800;
  ts.push_back(sm90);
  // The host emulator runs Apple MSL 3.1 (bf16 available); its costs are those of the
  // emulated Apple GPU so that plans made on the host match plans made for a Mac.
  Target host = apple("host", 1, true, false, 100);
  ts.push_back(host);
  return ts;
}

const std::vector<Target>& all_targets() {
  static const std::vector<Target> targets = make_targets();
  return targets;
}
}  // namespace

const Target& target_by_name(std::string_view name) {
  for (const Target& t : all_targets())
    if (t.name == name) return t;
  std::string known;
  for (const Target& t : all_targets()) known += (known.empty() ? "" : ", ") + t.name;
  throw UserError("unknown target '" + std::string(name) + "'; known targets: " + known);
}

std::vector<std::string> target_names() {
  std::vector<std::string> names;
  for (const Target& t : all_targets()) names.push_back(t.name);
  return names;
}

const Target& default_target() { return target_by_name("host"); }

}  // namespace metile::target
