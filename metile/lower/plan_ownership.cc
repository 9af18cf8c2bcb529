#include "metile/lower/plan_ownership.h"

#include <algorithm>
#include <map>
#include <set>

#include "metile/lower/group_vector_accesses.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

// Grouping needs four adjacent values of a 2- or 4-byte float per thread.
constexpr int64_t kGroupWidth = 4;

// Ops through which a kernel addresses threads or their shared memory directly.
const std::set<ir::OpKind> kThreadOps = {ir::OpKind::ThreadId,       ir::OpKind::SharedAlloc,
                                         ir::OpKind::Barrier,        ir::OpKind::SimdShuffle,
                                         ir::OpKind::SimdShuffleXor, ir::OpKind::SimdShuffleDown,
                                         ir::OpKind::SimdBroadcast,  ir::OpKind::SimdSum,
                                         ir::OpKind::SimdMax,        ir::OpKind::SimdMin};

// The first reason the kernel must keep striped ownership, or "" when it need not.
std::string striped_because(const ir::Kernel& k) {
  if (const auto it = k.attrs.find("vector_width"); it != k.attrs.end()) {
    const int64_t* width = std::get_if<int64_t>(&it->second);
    if (width && *width == 1) return "the kernel sets vector_width = 1";
  }
  std::string why;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (!why.empty()) return;
    for (ir::ValueId v : op.results)
      if (k.type(v).is_tile() && k.type(v).shape.size() != 1)
        why = "a 2-D tile (" + k.type(v).str() + ") is not a 1-D access pattern";
    if (!why.empty()) return;
    if (op.kind == ir::OpKind::Broadcast)
      why = "broadcast would move values between threads";
    else if (kThreadOps.count(op.kind))
      why = "the kernel programs threads itself (" + std::string(ir::op_name(op.kind)) + ")";
  });
  return why;
}

// The widest group (group_width) of the f16/bf16/f32 tile loads and stores of each tile size.
std::map<int64_t, int64_t> group_widths(const ir::Kernel& k, const target::Target& target) {
  std::map<int64_t, int64_t> widths;
  auto consider = [&](ir::ValueId v) {
    const ir::Type& t = k.type(v);
    if (!t.is_tile() || !groupable_dtype(t.dtype)) return;
    int64_t& width = widths[t.num_elements()];
    width = std::max<int64_t>(width, std::max(kGroupWidth, int64_t{group_width(target, t.dtype)}));
  };
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::Load) consider(op.results[0]);
    if (op.kind == ir::OpKind::Store) consider(op.operands[1]);
  });
  return widths;
}

// Tile sizes of f16/bf16/f32 loads and stores that give each thread a group of four.
std::set<int64_t> groupable_sizes(const ir::Kernel& k, int64_t threads,
                                  const target::Target& target) {
  std::set<int64_t> sizes;
  for (const auto& [size, width] : group_widths(k, target))
    if (size >= kGroupWidth * threads) sizes.insert(size);
  return sizes;
}

std::set<int64_t> tile_sizes(const ir::Kernel& k, int64_t threads) {
  std::set<int64_t> sizes;
  for (const ir::Type& t : k.types)
    if (t.is_tile() && t.num_elements() > threads) sizes.insert(t.num_elements());
  return sizes;
}

}  // namespace

ir::ThreadLayout contiguous_layout(int64_t size, int64_t threads, int64_t run) {
  const int thread_bits = log2_exact(threads), register_bits = log2_exact(size / threads);
  const int run_bits = std::min(register_bits, log2_exact(run));
  std::vector<int> order;
  for (int b = 0; b < run_bits; ++b) order.push_back(thread_bits + b);
  for (int b = 0; b < thread_bits; ++b) order.push_back(b);
  for (int b = run_bits; b < register_bits; ++b) order.push_back(thread_bits + b);
  return ir::ThreadLayout(std::move(order), 0, size / threads);
}

int64_t grouped_elements_per_thread(const ir::Kernel& tile, const target::Target& target) {
  if (!striped_because(tile).empty()) return 0;
  int64_t widest = 0;
  for (const auto& [size, width] : group_widths(tile, target)) widest = std::max(widest, width);
  return widest;
}

OwnershipChoice plan_ownership(const ir::Kernel& tile, int64_t threads,
                               const target::Target& target) {
  if (const std::string why = striped_because(tile); !why.empty()) return {{}, "striped: " + why};
  if (groupable_sizes(tile, threads, target).empty())
    return {{},
            "striped: no f16/bf16/f32 tile load or store gives each thread " +
                std::to_string(kGroupWidth) + " elements to group"};
  const std::map<int64_t, int64_t> widths = group_widths(tile, target);
  OwnershipChoice choice;
  for (int64_t size : tile_sizes(tile, threads)) {
    const auto it = widths.find(size);
    const int64_t run = it == widths.end() ? size / threads : it->second;
    choice.layouts.push_back(contiguous_layout(size, threads, run));
  }
  choice.reason =
      "contiguous: each thread owns runs of adjacent elements of 1-D tiles, as wide as one "
      "vector access, so its f16/bf16/f32 accesses can be grouped; no value crosses threads";
  return choice;
}

}  // namespace metile::lower
