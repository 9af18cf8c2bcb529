// Every limit and capability a pass or planner may consult (DESIGN.md, "Targets"). No pass
// writes these numbers as literals.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metile::target {

enum class Language { MSL, CUDA };

// The hardware matrix-multiply facilities a target offers; a target may have several.
enum class MatrixFacility : uint8_t {
  SimdgroupMatrix8x8,  // MSL simdgroup_matrix<T, 8, 8> (Apple GPUs)
  AppleTensorOps,      // Metal 4 tensor ops (M5)
  MmaSync,             // PTX mma.sync warp-level fragments (sm_80 and later)
  Wgmma,               // PTX wgmma warpgroup matrices from shared memory (sm_90)
};

class MatrixFacilities {
 public:
  MatrixFacilities() = default;
  MatrixFacilities(std::initializer_list<MatrixFacility> facilities) {
    for (MatrixFacility f : facilities) bits_ |= bit(f);
  }
  bool has(MatrixFacility f) const { return (bits_ & bit(f)) != 0; }
  bool none() const { return bits_ == 0; }
  bool operator==(const MatrixFacilities&) const = default;

 private:
  static uint32_t bit(MatrixFacility f) { return uint32_t{1} << static_cast<unsigned>(f); }
  uint32_t bits_ = 0;
};

std::string_view matrix_facility_name(MatrixFacility f);  // "simdgroup-8x8", "wgmma", ...

struct Target {
  std::string name;  // "apple-m3", "sm90", "host"
  Language language = Language::MSL;
  int msl_version_major = 3;  // MSL targets: 3.0 (M1, M2) or 3.1+ (bf16)
  int msl_version_minor = 0;
  int simd_width = 32;
  // SIMD-group collectives and SIMD-group barriers need every lane of the group present
  // (CUDA's full-warp masks): a threadgroup that is not a whole number of SIMD groups may
  // not use them. Metal runs them on partial groups.
  bool collectives_need_whole_simd_groups = false;
  int max_threads_per_threadgroup = 1024;
  // The largest tile a kernel may hold (elements of one tile value), and the threadgroups a
  // launch may have per grid dimension (program ids are i32) and in all; nullopt: no bound
  // beyond the dimensions'.
  int64_t max_tile_elements = 32768;
  std::array<int64_t, 3> max_grid = {INT32_MAX, INT32_MAX, INT32_MAX};
  std::optional<int64_t> max_threadgroups_per_launch;
  // Threadgroup (CUDA: shared) memory, in bytes. threadgroup_memory_bytes is the most one
  // threadgroup may use at all (CUDA: the dynamic opt-in limit); a kernel that declares
  // its block with a fixed size gets only static_threadgroup_memory_bytes (CUDA: 48 KB
  // without opt-in); the threadgroups resident on one core (SM) share
  // threadgroup_memory_per_core, which bounds occupancy.
  int64_t threadgroup_memory_bytes = 32768;
  int64_t static_threadgroup_memory_bytes = 32768;
  int64_t threadgroup_memory_per_core = 32768;
  int registers_per_thread = 128;         // 32-bit registers a thread may hold before spilling
  std::optional<int> registers_per_core;  // the register file of one core (SM), when published
  bool supports_bf16 = false;
  // 64-bit floats: CUDA GPUs and the host emulator's CPU have them; Apple GPUs do not.
  bool supports_f64 = false;
  MatrixFacilities matrix_facilities;
  // The asynchronous facilities a warp-specialised pipeline needs (sm90): TMA tiled copies from
  // tensor maps (cp.async.bulk.tensor), mbarrier phases with expected transaction bytes, and
  // warp-group register reallocation (setmaxnreg).
  bool has_tma = false;
  bool has_mbarrier = false;
  bool has_setmaxnreg = false;
  // Per-thread asynchronous copies from device to threadgroup memory (cp.async, 4 to 16
  // bytes), which a software pipeline's copies take.
  bool has_async_copy = false;
  // Vector memory access: a buffer's first byte is aligned to buffer_alignment_bytes, and
  // one load or store moves at most max_vector_bytes in at most max_vector_elements lanes.
  int buffer_alignment_bytes = 16;
  int max_vector_bytes = 16;
  int max_vector_elements = 4;
  // Whether a vector access needs the vector's own alignment (CUDA's float4: 16 bytes) rather
  // than the element's (MSL's packed_float4): grouped accesses then test the address first.
  bool vector_access_needs_vector_alignment = false;
  // The fewest elements a grouped access packs: seed 004's four, or two where a pair is one
  // native access (CUDA's 4-byte bf16x2/half2, 8-byte float2), as the matrix accumulators'
  // register pairs of adjacent columns are.
  int min_vector_group = 4;
  // Whether a guarded grouped load's two branches join the whole vector (extracts after the
  // join) rather than each element: on CUDA a join of 16-bit elements cost a PRMT each (the
  // halves of a word move into registers of their own), while the host emulator's C++ compiler
  // ran the element join about twice as fast as the vector one (docs/lowering.md, "The guard").
  bool grouped_load_joins_vector = false;
  // Cost model inputs for planners.
  double launch_cost_us = 5.0;           // fixed cost of one kernel launch
  double memory_bandwidth_gbps = 100.0;  // sustained device-memory bandwidth
  // Issue rate of the whole device (billions of thread operations a second) and the cost of
  // the slower operation classes in simple-operation units (metile/tune/cost_model.h).
  double issue_rate_gops = 2000.0;
  double transcendental_weight = 4.0;
  double simd_collective_weight = 2.0;
  double barrier_weight = 32.0;
  double matrix_mma_weight = 16.0;  // an 8x8x8 multiply-accumulate per thread of its SIMD group
};

// The named targets: apple-m1 ... apple-m5, sm90, host. Throws UserError on an unknown name
// listing the known ones.
const Target& target_by_name(std::string_view name);
std::vector<std::string> target_names();
// The host emulator's target, which executes the MSL of an Apple target. Device-independent
// planners default to it; a device names its own Target (runtime::Device::target()).
const Target& default_target();

}  // namespace metile::target
