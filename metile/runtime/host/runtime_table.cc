#include "metile/runtime/host/runtime_table.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <string>

#include "metile/runtime/host/guarded_memory.h"
#include "metile/runtime/host/threadgroup_runner.h"
#include "metile/support/errors.h"

namespace metile::runtime::host {

namespace {

std::array<unsigned char, 32> matrix_lane_map = [] {
  std::array<unsigned char, 32> identity;
  std::iota(identity.begin(), identity.end(), 0);
  return identity;
}();

void threadgroup_barrier(unsigned /*mem_flags*/, int line) {
  ThreadgroupRunner::active()->threadgroup_barrier(line);
}
MetileHostSimdView simd_rendezvous(const void* value, unsigned bytes, const char* op, int line) {
  return ThreadgroupRunner::active()->simd_rendezvous(value, bytes, op, line);
}
unsigned simd_lane() {
  return ThreadgroupRunner::active()->simd_lane();
}
unsigned thread_index() {
  const std::optional<unsigned> thread = ThreadgroupRunner::active()->current_thread();
  if (!thread)
    ThreadgroupRunner::active()->fail(
        "a cooperative tensor needs its thread's index, which a work-group function lacks");
  return *thread;
}
void fail(const char* message) {
  ThreadgroupRunner::active()->fail(message);
}

void fail_thread(unsigned thread, const char* message) {
  ThreadgroupRunner::active()->fail_thread(thread, message);
}

void assert_failed(unsigned thread, const char* message, const char* file, int line) {
  ThreadgroupRunner::active()->assert_failed(thread, message, SourceLocation{file, line});
}

void out_of_bounds(unsigned thread, unsigned param, long long byte_offset, unsigned bytes,
                   int is_write, int line) {
  ThreadgroupRunner::active()->out_of_bounds(thread, param, byte_offset, bytes, is_write != 0,
                                             line);
}

int in_some_buffer(const void* address, unsigned bytes) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  const std::optional<RegionInfo> region = find_guarded_region(at);
  if (!region || region->kind != RegionKind::Buffer) return 0;
  const auto begin = reinterpret_cast<std::uintptr_t>(region->data);
  return at >= begin && region->size >= bytes && at - begin <= region->size - bytes;
}

void memory_access(const void* address, unsigned bytes, int is_write, const void* pc) {
  if (ThreadgroupRunner* runner = ThreadgroupRunner::active())
    runner->memory_access(address, bytes, is_write != 0, pc);
}

const MetileHostRuntime table{
    METILE_HOST_ABI_VERSION, &threadgroup_barrier, &simd_rendezvous, &simd_lane,     &fail,
    matrix_lane_map.data(),  &memory_access,       &fail_thread,     &assert_failed, &thread_index,
    &out_of_bounds,          &in_some_buffer};

// METILE_HOST_MATRIX_LANE_MAP=permuted: lane l holds what Apple's mapping gives lane
// (13 * l + 7) % 32, a fixed permutation (13 is odd, so it is one) that moves every lane.
void apply_lane_map_from_environment() {
  const char* env = std::getenv("METILE_HOST_MATRIX_LANE_MAP");
  const std::string choice = env ? env : "";
  if (choice.empty() || choice == "apple") return;
  if (choice != "permuted")
    throw UserError("METILE_HOST_MATRIX_LANE_MAP must be apple or permuted, got '" + choice + "'");
  std::array<unsigned char, 32> permuted;
  for (unsigned l = 0; l < 32; ++l) permuted[l] = static_cast<unsigned char>((13 * l + 7) % 32);
  set_simdgroup_matrix_lane_map(permuted);
}

}  // namespace

const MetileHostRuntime& host_runtime_table() {
  static std::once_flag environment_read;
  std::call_once(environment_read, apply_lane_map_from_environment);
  return table;
}

void set_simdgroup_matrix_lane_map(const std::array<unsigned char, 32>& lane_map) {
  std::array<unsigned char, 32> sorted = lane_map;
  std::sort(sorted.begin(), sorted.end());
  for (unsigned i = 0; i < 32; ++i)
    if (sorted[i] != i) throw UserError("simdgroup matrix lane map must be a permutation of 0..31");
  matrix_lane_map = lane_map;
}

}  // namespace metile::runtime::host
