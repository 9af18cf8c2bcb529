#include "metile/lower/plan_threads.h"

#include <algorithm>

#include "metile/support/errors.h"

namespace metile::lower {

namespace {

// Elements each thread should hold when the tile is large enough: enough independent work
// per thread to hide memory latency without crowding the register file.
constexpr int64_t kElementsPerThread = 4;
// Below the hardware maximum on purpose: smaller threadgroups leave room for several
// threadgroups per core.
constexpr int64_t kDefaultThreadCeiling = 256;

bool is_power_of_two(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

int64_t largest_tile(const ir::Kernel& k) {
  int64_t largest = 0;
  auto consider = [&](ir::ValueId v) {
    const ir::Type& t = k.type(v);
    if (t.is_tile()) largest = std::max(largest, t.num_elements());
  };
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) consider(r);
    for (const ir::Block& region : op.regions)
      for (ir::ValueId a : region.args) consider(a);
  });
  return largest;
}

std::string target_words(const target::Target& target) {
  return "target " + target.name + " allows up to " +
         std::to_string(target.max_threads_per_threadgroup);
}

ThreadPlan requested_plan(const ir::Kernel& k, const target::Target& target) {
  const ir::Attr& attr = k.attrs.at("num_threads");
  const int64_t* n = std::get_if<int64_t>(&attr);
  if (!n) throw UserError("plan_threads: the kernel attribute num_threads must be an integer");
  if (!is_power_of_two(*n) || *n > target.max_threads_per_threadgroup)
    throw UserError("plan_threads: num_threads = " + std::to_string(*n) +
                    " must be a power of two no larger than " +
                    std::to_string(target.max_threads_per_threadgroup) + " (" +
                    target_words(target) + " threads per threadgroup)");
  return {static_cast<int>(*n),
          "the kernel requests num_threads = " + std::to_string(*n) + "; " + target_words(target)};
}

}  // namespace

void check_thread_plan(const ThreadPlan& plan, const target::Target& target) {
  const int n = plan.threads_per_threadgroup;
  if (n <= 0 || (n & (n - 1)) != 0 || n > target.max_threads_per_threadgroup)
    throw UserError("lower_to_metal: the thread plan's " + std::to_string(n) +
                    " threads per threadgroup must be a power of two no larger than " +
                    std::to_string(target.max_threads_per_threadgroup) + " (target " + target.name +
                    ")");
}

ThreadPlan plan_threads(const ir::Kernel& tile, const target::Target& target) {
  if (tile.attrs.count("num_threads")) return requested_plan(tile, target);
  const int64_t floor = target.simd_width;
  const int64_t ceiling =
      std::min<int64_t>(target.max_threads_per_threadgroup, std::max(kDefaultThreadCeiling, floor));
  const int64_t largest = largest_tile(tile);
  if (largest == 0)
    return {static_cast<int>(floor), "the kernel has no tiles; one SIMD group of " +
                                         std::to_string(floor) + " threads; " +
                                         target_words(target)};
  const int64_t threads = std::clamp(largest / kElementsPerThread, floor, ceiling);
  const int64_t per_thread = std::max<int64_t>(1, largest / threads);
  return {static_cast<int>(threads), "largest tile has " + std::to_string(largest) + " elements; " +
                                         std::to_string(threads) + " threads give " +
                                         std::to_string(per_thread) +
                                         (per_thread == 1 ? " element" : " elements") +
                                         " per thread; " + target_words(target)};
}

}  // namespace metile::lower
