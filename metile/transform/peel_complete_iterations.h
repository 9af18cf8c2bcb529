#pragma once

#include <string>
#include <vector>

#include "metile/ir/pass_result.h"

namespace metile::transform {

// Separates the iterations of a loop in which every device tile access is provably complete
// from a guarded remainder (seed 002, "Direct device tiles and masked tails"), so that those
// iterations run one matrix access each with no bounds check:
//
//   for i in [0, end) step S        becomes   n = end >= C + 8 ? (end - C - 8) // S + 1 : 0
//     body                                    for i in [0, n * S) step S: body, tiles complete
//                                             for i in [n * S, end) step S: body (guarded)
//
// A loop is eligible when it starts at constant 0 with a positive constant step and a signed
// (i32) index, is nested in no other loop, and every device tile access in it sits at its body's
// top level with, in each dimension, either the origin i + c (a constant c >= 0; C is the
// largest) and the loop's end as the extent, or a constant origin o >= 0 and constant extent X
// with o + 8 <= X. Loops with unrelated extents, uncertain offsets or device tiles in nested
// loops keep their guards, unchanged. Values carried by the loop, scalars and fragments alike,
// pass from the first portion into the remainder.
struct PeeledLoop {
  std::string loop;       // "for %8 at file:line"
  int device_tiles = 0;   // the device tile accesses it marked complete in the first portion
  std::string condition;  // the proof's condition on an iteration's index i
};
struct Peeling {
  ir::PassResult result;
  std::vector<PeeledLoop> loops;
};
Peeling peel_complete_iterations(ir::Kernel k);

}  // namespace metile::transform
