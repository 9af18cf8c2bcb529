#include "metile/target/target.h"

#include "metile/support/errors.h"

namespace metile::target {

namespace {
// Apple GPUs (Metal feature set tables): 32 KB of threadgroup memory per threadgroup,
// static or set at encode time alike (grids: only the i32 program ids bound them); the per-core
// total is not published, so one threadgroup's worth is the safe bound. MSL vectors have up to 4
// lanes (16 bytes).
Target apple(std::string name, int msl_minor, bool bf16, MatrixFacilities matrix,
             double bandwidth) {
  Target t;
  t.name = std::move(name);
  t.language = Language::MSL;
  t.msl_version_major = 3;
  t.msl_version_minor = msl_minor;
  t.supports_bf16 = bf16;
  t.matrix_facilities = matrix;
  t.memory_bandwidth_gbps = bandwidth;
  t.launch_cost_us = 5.0;
  return t;
}

// The H200 (sm_90): grids of up to 2^31 - 1 x 65535 x 65535 blocks; 227 KB of shared memory per
// block with the dynamic opt-in, 48 KB declared statically, 228 KB per SM; 64K registers per SM,
// 255 per thread; buffers from cuMemAlloc are 256-byte aligned; the widest access is 128 bits
// (float4).
Target sm90() {
  Target t;
  t.name = "sm90";
  t.language = Language::CUDA;
  t.simd_width = 32;
  t.collectives_need_whole_simd_groups = true;
  t.max_threads_per_threadgroup = 1024;
  t.threadgroup_memory_bytes = 227 * 1024;
  t.static_threadgroup_memory_bytes = 48 * 1024;
  t.threadgroup_memory_per_core = 228 * 1024;
  t.registers_per_thread = 255;
  t.registers_per_core = 65536;
  t.max_grid = {INT32_MAX, 65535, 65535};
  t.supports_bf16 = true;
  t.supports_f64 = true;
  t.matrix_facilities = {MatrixFacility::MmaSync, MatrixFacility::Wgmma};
  t.has_tma = true;
  t.has_mbarrier = true;
  t.has_setmaxnreg = true;
  t.has_async_copy = true;
  t.buffer_alignment_bytes = 256;
  t.max_vector_bytes = 16;
  t.max_vector_elements = 8;  // eight 2-byte elements in one 16-byte access
  t.vector_access_needs_vector_alignment = true;
  t.min_vector_group = 2;
  t.grouped_load_joins_vector = true;
  t.launch_cost_us = 3.0;
  t.memory_bandwidth_gbps = 4300;
  t.issue_rate_gops = 60000;  // 132 SMs x 4 x 32 lanes at 1.8 GHz, order of magnitude
  return t;
}

std::vector<Target> make_targets() {
  const MatrixFacilities simdgroup{MatrixFacility::SimdgroupMatrix8x8};
  const MatrixFacilities tensor_ops{MatrixFacility::SimdgroupMatrix8x8,
                                    MatrixFacility::AppleTensorOps};
  std::vector<Target> ts;
  ts.push_back(apple("apple-m1", 0, false, simdgroup, 68));
  ts.push_back(apple("apple-m2", 0, false, simdgroup, 100));
  ts.push_back(apple("apple-m3", 1, true, simdgroup, 100));
  ts.push_back(apple("apple-m4", 2, true, simdgroup, 120));
  ts.push_back(apple("apple-m5", 2, true, tensor_ops, 153));
  ts.push_back(sm90());
  // The host emulator runs Apple MSL 3.1 (bf16 available); its costs are those of the
  // emulated Apple GPU so that plans made on the host match plans made for a Mac. Its
  // buffers are 16-byte aligned (GuardedRegion).
  // The emulator runs a threadgroup in microseconds, not nanoseconds: a launch of more than
  // 2^24 threadgroups would run for hours, so it is refused.
  // It also emulates Metal 4's tensor ops (MetalPerformancePrimitives' matmul2d), so the
  // tensor_ops backend's MSL runs here as it would on an M5.
  Target host = apple("host", 1, true, tensor_ops, 100);
  host.max_threadgroups_per_launch = int64_t{1} << 24;
  // The emulator's CPU computes doubles, so f64 kernels run here though no Apple GPU runs them.
  host.supports_f64 = true;
  ts.push_back(std::move(host));
  return ts;
}

const std::vector<Target>& all_targets() {
  static const std::vector<Target> targets = make_targets();
  return targets;
}
}  // namespace

std::string_view matrix_facility_name(MatrixFacility f) {
  switch (f) {
    case MatrixFacility::SimdgroupMatrix8x8:
      return "simdgroup-8x8";
    case MatrixFacility::AppleTensorOps:
      return "apple-tensor-ops";
    case MatrixFacility::MmaSync:
      return "mma-sync";
    case MatrixFacility::Wgmma:
      return "wgmma";
  }
  throw InternalError("matrix_facility_name: a MatrixFacility without a name");
}

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

const Target& default_target() {
  return target_by_name("host");
}

}  // namespace metile::target
