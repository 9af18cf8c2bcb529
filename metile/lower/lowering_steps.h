// The per-concern lowering steps lower_block dispatches to; each takes one Tile IR op and
// binds its results (lowering_context.h).
#pragma once

#include "metile/lower/lowering_context.h"

namespace metile::lower {

// lower_elementwise.cc: constants, geometry, arange, splat, arithmetic, cmp, select, cast,
// math, and SIMD collectives on per-thread scalars.
// constant, program_id, num_programs: one uniform scalar, the Metal IR op `metal_kind` with
// the op's attributes.
void lower_uniform_scalar(Lowering& l, const ir::Op& op, ir::OpKind metal_kind);
void lower_thread_id(Lowering& l, const ir::Op& op);
void lower_arange(Lowering& l, const ir::Op& op);
void lower_splat(Lowering& l, const ir::Op& op);
void lower_elementwise(Lowering& l, const ir::Op& op);
void lower_simd_collective(Lowering& l, const ir::Op& op);

// lower_memory.cc: ptr_add, load, store, shared_alloc, barrier.
void lower_ptr_add(Lowering& l, const ir::Op& op);
void lower_load(Lowering& l, const ir::Op& op);
void lower_store(Lowering& l, const ir::Op& op);
void lower_shared_alloc(Lowering& l, const ir::Op& op);
void lower_barrier(Lowering& l, const ir::Op& op);

// lower_data_movement.cc: expand_dims and broadcast, forwarding or exchanging values.
void lower_expand_dims(Lowering& l, const ir::Op& op);
void lower_broadcast(Lowering& l, const ir::Op& op);

// lower_convert_layout.cc: a tile to another ThreadLayout, by forwarding, SIMD shuffles or
// threadgroup scratch, as the owner map requires.
void lower_convert_layout(Lowering& l, const ir::Op& op);

// lower_reduce.cc: a whole tile to one uniform scalar, and the pieces every reduction shares.
void lower_reduce(Lowering& l, const ir::Op& op);
struct ReduceKind {
  ir::OpKind combine;  // the elementwise op that combines two values
  ir::OpKind simd;     // the SIMD collective that combines a SIMD group
};
// The kind attribute of a reduce or reduce_axis; NotSupported for another kind.
ReduceKind reduce_kind(Lowering& l, const ir::Op& op);
// The value that leaves any other unchanged under `combine`.
ir::ValueId reduce_identity(Lowering& l, const ir::Op& op, ir::OpKind combine, ir::DType dtype);
// Pairs neighbours until one value is left: depth log2(n) instead of n.
ir::ValueId combine_tree(Lowering& l, ir::OpKind combine, ir::Type type,
                         std::vector<ir::ValueId> values);

// lower_reduce_axis.cc: a 2-D tile along one axis to a 1-D tile.
void lower_reduce_axis(Lowering& l, const ir::Op& op);
// lower_scan.cc: the inclusive scan of a tile along one axis.
void lower_scan(Lowering& l, const ir::Op& op);

// lower_dot.cc: acc + a @ b through a threadgroup exchange, in the accumulator's layout.
void lower_dot(Lowering& l, const ir::Op& op);

// lower_trans.cc: reshape (no movement) and trans (forwarded, SIMD shuffles or scratch).
void lower_reshape(Lowering& l, const ir::Op& op);
void lower_trans(Lowering& l, const ir::Op& op);
// The private scratch bytes the kernel's register reductions need, laid out before lowering.
int64_t register_reduction_bytes(const ir::Kernel& tile, const ThreadPlan& plan,
                                 const target::Target& target);

// lower_control_flow.cc: for and if.
void lower_for(Lowering& l, const ir::Op& op);
void lower_if(Lowering& l, const ir::Op& op);

}  // namespace metile::lower
