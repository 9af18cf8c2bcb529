// The element of a Tile IR integer, pointer or i1 tile at logical coordinates, recomputed in
// Metal IR from the tile's definition (arange, splat, expand_dims, broadcast, ptr_add, casts
// and the elementwise integer ops: arithmetic, division and remainder, min and max, bitwise
// and shifts, comparisons) instead of read from its register slots. A broadcast's slots come
// through an exchange, which hides from group_vector_accesses that neighbouring addresses are
// consecutive (dot_operand_vectors.cc); a dot operand read straight from device memory needs
// its addresses and mask at a fragment's elements, not at the thread's own
// (lower_dot_device_operands.cc).
#pragma once

#include <map>
#include <utility>
#include <vector>

#include "metile/lower/lowering_context.h"

namespace metile::lower {

// The Tile IR op that defines each value of k (Lowering::definers holds the kernel's).
std::map<ir::ValueId, const ir::Op*> definers_of(const ir::Kernel& k);

// The ops of `block` (its top level) that compute `values` there, with the ops they read from
// the block, in program order: a loop body's slice that a copy lowers again at another step
// (lower_pipelined_loop.cc, staged_prefetch.cc).
std::vector<const ir::Op*> block_slice(const ir::Block& block,
                                       const std::vector<ir::ValueId>& values);

class Rematerialise {
 public:
  // `definers`: the Tile IR op that defines each value.
  Rematerialise(Lowering& l, const std::map<ir::ValueId, const ir::Op*>& definers)
      : l_(l), definers_(definers) {}

  // Whether every op of v's definition is one `at` recomputes, and its scalars are uniform.
  bool possible(ir::ValueId v) const;
  // v at coordinates (one Metal IR i32 per dimension of v's shape).
  ir::ValueId at(ir::ValueId v, const std::vector<ir::ValueId>& coords);

 private:
  // A ptr_add tile at coordinates as one ptr_add of its innermost pointer, the offsets summed
  // (Triton's addptr combination), so that neighbouring elements share a base
  // (group_vector_accesses); nested offsets of different dtypes stay nested.
  std::pair<ir::ValueId, ir::ValueId> pointer_parts_at(ir::ValueId v,
                                                       const std::vector<ir::ValueId>& coords);

  Lowering& l_;
  const std::map<ir::ValueId, const ir::Op*>& definers_;
};

}  // namespace metile::lower
