#include "metile/lower/plan_threads.h"

#include <algorithm>
#include <set>

#include "metile/lower/plan_ownership.h"
#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::lower {

namespace {

// Elements each thread should hold when the tile is large enough: enough independent work
// per thread to hide memory latency without crowding the register file.
constexpr int64_t kElementsPerThread = 4;
// Below the hardware maximum on purpose: smaller threadgroups leave room for several
// threadgroups per core.
constexpr int64_t kDefaultThreadCeiling = 256;

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

ThreadPlan with_ownership(ThreadPlan plan, const ir::Kernel& tile, const target::Target& target) {
  OwnershipChoice choice = plan_ownership(tile, plan.threads_per_threadgroup, target);
  plan.layouts = std::move(choice.layouts);
  plan.ownership = std::move(choice.reason);
  return plan;
}

ThreadPlan plan_geometry(const ir::Kernel& tile, const target::Target& target) {
  if (tile.attrs.count("num_threads")) return requested_plan(tile, target);
  const int64_t floor = target.simd_width;
  const int64_t ceiling =
      std::min<int64_t>(target.max_threads_per_threadgroup, std::max(kDefaultThreadCeiling, floor));
  const int64_t largest = largest_tile(tile);
  if (largest == 0)
    return {static_cast<int>(floor), "the kernel has no tiles; one SIMD group of " +
                                         std::to_string(floor) + " threads; " +
                                         target_words(target)};
  // Enough elements to fill one vector access where the accesses group (8 f16 in 16 bytes).
  const int64_t per_thread_goal =
      std::max(kElementsPerThread, grouped_elements_per_thread(tile, target));
  const int64_t threads = std::clamp(largest / per_thread_goal, floor, ceiling);
  const int64_t per_thread = std::max<int64_t>(1, largest / threads);
  return {static_cast<int>(threads), "largest tile has " + std::to_string(largest) + " elements; " +
                                         std::to_string(threads) + " threads give " +
                                         std::to_string(per_thread) +
                                         (per_thread == 1 ? " element" : " elements") +
                                         " per thread; " + target_words(target)};
}

// The layouts the kernel gives its tiles itself, in program order.
std::vector<ir::ThreadLayout> explicit_layouts(const ir::Kernel& k) {
  std::vector<ir::ThreadLayout> layouts;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (const ir::ThreadLayout* layout = op.layout_attr("layout")) layouts.push_back(*layout);
  });
  return layouts;
}

ThreadPlan explicit_plan(const ir::Kernel& k, const std::vector<ir::ThreadLayout>& layouts,
                         const target::Target& target) {
  const int64_t threads = layouts[0].thread_count();
  for (const ir::ThreadLayout& layout : layouts)
    if (layout.thread_count() != threads || layout.size() != layouts[0].size())
      throw UserError("plan_threads: kernel '" + k.name + "' gives tiles the layouts " +
                      layouts[0].str() + " and " + layout.str() +
                      "; tile sizes and register counts must agree within a kernel");
  if (threads > target.max_threads_per_threadgroup)
    throw UserError("plan_threads: the layout " + layouts[0].str() + " needs " +
                    std::to_string(threads) + " threads per threadgroup; " + target_words(target) +
                    "; reduce the layout's thread count");
  if (const auto it = k.attrs.find("num_threads"); it != k.attrs.end()) {
    const int64_t* n = std::get_if<int64_t>(&it->second);
    if (!n || *n != threads)
      throw UserError("plan_threads: the kernel requests num_threads, but its layout " +
                      layouts[0].str() + " fixes " + std::to_string(threads) + " threads");
  }
  ThreadPlan plan(static_cast<int>(threads),
                  "the kernel's layouts own " + std::to_string(layouts[0].size()) +
                      " elements on " + std::to_string(threads) + " threads, " +
                      std::to_string(layouts[0].elements_per_thread()) + " per thread; " +
                      target_words(target));
  plan.ownership = "explicit: the kernel gives its tiles layouts";
  plan.explicit_layouts = true;
  return plan;
}

}  // namespace

ThreadPlan plan_threads(const ir::Kernel& tile, const target::Target& target) {
  if (const std::vector<ir::ThreadLayout> layouts = explicit_layouts(tile); !layouts.empty())
    return explicit_plan(tile, layouts, target);
  return with_ownership(plan_geometry(tile, target), tile, target);
}

void check_thread_plan(const ThreadPlan& plan, const target::Target& target) {
  const int n = plan.threads_per_threadgroup;
  if (n <= 0 || (n & (n - 1)) != 0 || n > target.max_threads_per_threadgroup)
    throw UserError("lower_to_metal: the thread plan's " + std::to_string(n) +
                    " threads per threadgroup must be a power of two no larger than " +
                    std::to_string(target.max_threads_per_threadgroup) + " (target " + target.name +
                    ")");
  std::set<int64_t> sizes;
  for (const ir::ThreadLayout& layout : plan.layouts) {
    if (layout.thread_count() != n)
      throw UserError("lower_to_metal: the thread plan's layout " + layout.str() + " covers " +
                      std::to_string(layout.thread_count()) + " threads, but the plan has " +
                      std::to_string(n));
    if (!sizes.insert(layout.size()).second)
      throw UserError("lower_to_metal: the thread plan has two layouts for tiles of " +
                      std::to_string(layout.size()) + " elements");
  }
}

}  // namespace metile::lower
