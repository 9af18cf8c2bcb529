// Which threads own which elements of the kernel's tiles (docs/lowering.md, "Ownership"):
// striped (thread t owns t + r * T, the default) or contiguous (thread t owns the E adjacent
// elements t * E + r). Contiguous ownership lets a later pass group each thread's four
// adjacent f16/bf16/f32 accesses into one 16-byte access; it is chosen only where no value has to
// move between threads because of it.
#pragma once

#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/ir/thread_layout.h"

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
OwnershipChoice plan_ownership(const ir::Kernel& tile, int64_t threads);

// The layout in which each of `threads` threads owns size / threads adjacent elements.
ir::ThreadLayout contiguous_layout(int64_t size, int64_t threads);

}  // namespace metile::lower
