// wgmma_staged's prefetch ring (staged_prefetch.cc): a loop's staged b tiles of the next step
// are copied into the other of two slots while this step computes.
#pragma once

#include <optional>
#include <vector>

#include "metile/lower/lowering_context.h"

namespace metile::lower {

struct StagedRing {
  struct Operand {
    const ir::Op* dot = nullptr;
    const ir::Op* load = nullptr;       // its b, left unlowered
    ir::ValueId buffer = ir::kNoValue;  // both slots, pinned
    int64_t slot_elements = 0;
    bool k_major = false;
  };
  const ir::Op* loop = nullptr;
  std::vector<Operand> operands;
  std::vector<const ir::Op*> slice;  // the body ops the copies read, in program order
  // Set by lower_for inside the loop: the step's induction variable, step, end and slot.
  ir::ValueId induction = ir::kNoValue, step = ir::kNoValue, end = ir::kNoValue;
  ir::ValueId slot = ir::kNoValue;
  bool published = false;  // this step's slots are published (its first ring dot was lowered)

  // The ring operand of `dot`, or none.
  const Operand* find(const ir::Op& dot) const;
};

// Before the loop (start and end lowered): the ring of its staged b loads, their slots
// allocated and step 0's tiles copied; none when no b of the loop's body qualifies.
std::optional<StagedRing> start_staged_ring(Lowering& l, const ir::Op& loop, ir::ValueId start,
                                            ir::ValueId end);
// Inside the loop, at a ring dot: its b's slot for this step; the step's first ring dot
// publishes the step's tiles and starts copying the next step's.
ir::ValueId ring_slot(Lowering& l, StagedRing& ring, const StagedRing::Operand& o);
// After the loop: nothing in flight, the slots free.
void finish_staged_ring(Lowering& l);

}  // namespace metile::lower
