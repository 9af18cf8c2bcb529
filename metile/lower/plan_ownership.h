// Which threads own which elements of the kernel's tiles (docs/lowering.md, "Ownership"):
// striped (thread t owns t + r * T, the default) or contiguous (thread t owns runs of G
// adjacent elements, G the widest vector access of the tile's loads and stores: elements
// (r / G) * T * G + t * G + r % G). Contiguous ownership lets a later pass group each run
// into one packed access, while a SIMD group's accesses stay adjacent in memory; it is chosen
// only where no value has to move between threads because of it.
#pragma once

#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/ir/thread_layout.h"
#include "metile/target/target.h"

namespace metile::lower {

struct OwnershipChoice {
  // One contiguous layout per tile size that gets one; other sizes stay striped.
  std::vector<ir::ThreadLayout> layouts;
  std::string reason;  // "contiguous: ..." or "striped: ..."
};

// Contiguous ownership over `threads` threads when every tile is 1-D, the kernel moves no
// tile between threads (no broadcast of a non-uniform tile), programs no threads explicitly
// (thread_id, SIMD collectives, shared memory, barriers), has not set vector_width = 1, and
// has a tile of f16, bf16 or f32 loads or stores with at least four elements per thread.
// Runs are as long as the target's widest group of those accesses (group_width).
OwnershipChoice plan_ownership(const ir::Kernel& tile, int64_t threads,
                               const target::Target& target);

// The elements per thread that fill the widest group of the kernel's tile loads and stores
// on the target (8 for f16 on sm90), or 0 when the kernel keeps striped ownership.
int64_t grouped_elements_per_thread(const ir::Kernel& tile, const target::Target& target);

// The layout in which each of `threads` threads owns size / threads elements in runs of
// `run` adjacent ones (all adjacent when run >= size / threads), the runs of one register
// index adjacent across threads.
ir::ThreadLayout contiguous_layout(int64_t size, int64_t threads, int64_t run);

}  // namespace metile::lower
