#include "metile/check_resources.h"

#include <algorithm>

#include "metile/ir/printer.h"
#include "metile/support/errors.h"

namespace metile {

namespace {

struct Tile {
  ir::Type type;
  SourceLocation loc;
  int64_t elements = 0;
  int64_t words = 0;  // 32-bit registers for all its elements
};

// The tile with the most elements, and the one with the most 32-bit words.
struct LargestTiles {
  Tile by_elements, by_words;
};

LargestTiles largest_tiles(const ir::Kernel& k) {
  LargestTiles largest;
  auto consider = [&](ir::ValueId v, const SourceLocation& loc) {
    const ir::Type& t = k.type(v);
    if (!t.is_tile()) return;
    // A tile of pointers lowers to offsets from one base: a word each.
    const int words = t.pointer ? 1 : std::max(1, ir::dtype_bytes(t.dtype) / 4);
    const Tile tile{t, loc, t.num_elements(), t.num_elements() * words};
    if (tile.elements > largest.by_elements.elements) largest.by_elements = tile;
    if (tile.words > largest.by_words.words) largest.by_words = tile;
  };
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) consider(r, op.loc);
    for (const ir::Block& region : op.regions)
      for (ir::ValueId a : region.args) consider(a, op.loc);
  });
  return largest;
}

std::string grid_str(const std::array<int64_t, 3>& g) {
  return "(" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) +
         ")";
}

}  // namespace

void check_resources(const ir::Kernel& tile, const lower::ThreadPlan& plan,
                     const target::Target& target) {
  const std::string kernel = "kernel '" + tile.name + "': ";
  const int threads = plan.threads_per_threadgroup;
  if (threads > target.max_threads_per_threadgroup)
    throw OutOfResources(kernel + std::to_string(threads) + " threads per threadgroup; target " +
                         target.name + " allows at most " +
                         std::to_string(target.max_threads_per_threadgroup));
  const LargestTiles largest = largest_tiles(tile);
  const Tile& big = largest.by_elements;
  if (big.elements == 0) return;
  if (big.elements > target.max_tile_elements)
    throw OutOfResources(kernel + "a " + big.type.str() + " has " + std::to_string(big.elements) +
                             " elements; target " + target.name + " allows at most " +
                             std::to_string(target.max_tile_elements) + " elements per tile",
                         big.loc);
  const Tile& heavy = largest.by_words;
  const int64_t per_thread = (heavy.elements + threads - 1) / threads;
  const int64_t registers = (heavy.words + threads - 1) / threads;
  if (registers > target.registers_per_thread)
    throw OutOfResources(kernel + "a " + heavy.type.str() + " on " + std::to_string(threads) +
                             " threads puts " + std::to_string(per_thread) +
                             " elements in each thread, at least " + std::to_string(registers) +
                             " 32-bit registers; target " + target.name + " allows " +
                             std::to_string(target.registers_per_thread) + " per thread",
                         heavy.loc);
}

void check_grid(const std::string& kernel, std::array<int64_t, 3> grid,
                const target::Target& target) {
  const std::string head = "launch of " + kernel + " with grid " + grid_str(grid) + ": ";
  for (int64_t g : grid)
    if (g < 1) throw UserError(head + "every grid dimension must be at least 1");
  for (int d = 0; d < 3; ++d)
    if (grid[d] > target.max_grid[d])
      throw OutOfResources(head + "dimension " + std::to_string(d) + " has " +
                           std::to_string(grid[d]) + " threadgroups; target " + target.name +
                           " allows at most " + grid_str(target.max_grid));
  if (!target.max_threadgroups_per_launch) return;
  // Each dimension is below 2^31, so the product of two fits; the third is checked by division.
  const int64_t xy = grid[0] * grid[1];
  const int64_t limit = *target.max_threadgroups_per_launch;
  if (xy > limit || grid[2] > limit / xy)
    throw OutOfResources(head + "more than " + std::to_string(limit) +
                         " threadgroups in all; target " + target.name + " allows at most " +
                         std::to_string(limit) + " per launch");
}

}  // namespace metile
