#pragma once

#include "metile/ir/ownership.h"

namespace metile::transform {

// Computes who owns every tile of a Tile IR kernel (metile/ir/ownership.h) and checks the
// ownership rules of seed 004:
//
// - arange {layout} and convert_layout give a tile an explicit ThreadLayout; elementwise ops
//   (arithmetic, cmp, select, cast, math), ptr_add, loads, stores and descriptor accesses
//   give their result the owner their tile operands share; splats of uniform scalars take
//   any owner (broadcast); an implicit layout is the identity when combined with an explicit
//   one;
// - operands with different owners combine only through convert_layout: otherwise a
//   UserError names both layouts and the source line; a tile built from a per-thread scalar
//   (thread_id, SIMD collectives) has no owner and may not meet an explicitly owned tile;
// - a kernel with explicit layouts is a straight-line program (no for, no if) of 1-D tiles
//   of one power-of-two size and one register count: 32 to 1024 threads, 1 to 32 elements
//   per thread, at most 32768 elements, and a kernel num_threads attribute, if any, equal to
//   the layouts' thread count; raw SIMD collectives and threadgroup allocations
//   are not supported there (NotSupported); its reductions are f32 sums; convert_layout
//   moves f16, f32, i32, u32 and i1 tiles, and multi-register tiles only to their own layout.
//
// Kernels without explicit layouts pass unchanged: every tile is Implicit.
ir::OwnershipMap check_ownership(const ir::Kernel& kernel);

}  // namespace metile::transform
