#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metile/ir/pass_result.h"

namespace metile::transform {

// The loads that feed a dot in a K loop are issued one iteration ahead (register double
// buffering), so that their memory latency overlaps the previous step's matrix work instead
// of stalling it:
//
//   for i in [s, e) step t carrying c            x0 = load(P(s, c0), M(s, c0) & s < e)
//     x = load(P(i, c), M(i, c))           =>    for i ... carrying c, x_cur (init x0)
//     acc = dot(x, ...)                            x_next = load(P(i + t, c'), M(i + t, c') & i + t
//     < e) yield ..., c'                                acc = dot(x_cur, ...)
//                                                  yield ..., c', x_next
//
// P and M, the load's address and mask, are cloned with the induction variable and the carried
// values of the iteration they load for: the loop's start and initial values before it, i + t
// and the values the body yields (c') inside it. The extra mask term keeps an iteration past
// the end from touching memory (its value, never used, is `other`). A load qualifies when it
// sits at the body's top level, its value feeds a dot of tiles there, the step is a positive
// constant, and its address and mask are pure ops of the induction variable, carried values and
// values defined before the loop; others are left alone. The prefetched tile is one more
// carried value: its registers are the cost, so a loop whose dots' accumulators and twice its
// prefetched tiles take more than `register_budget` 32-bit registers a thread (over `threads`
// threads) keeps its loads where they are. With `keep_accumulators`, so does a loop that
// carries only a dot's accumulator: the software pipeline stages that canonical loop in shared
// memory (lower_pipelined_loop.cc).
struct Prefetching {
  ir::PassResult result;
  std::vector<std::string> loops;  // "for %8 at file:line (2 loads)", each loop it rewrote
};
Prefetching prefetch_dot_operands(ir::Kernel k, int64_t threads, int64_t register_budget,
                                  bool keep_accumulators);

}  // namespace metile::transform
