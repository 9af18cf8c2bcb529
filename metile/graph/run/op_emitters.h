// Tile emitters: each graph op as Tile IR, built with metile::dsl inside the kernel being
// traced. A region kernel (row_kernel.h, matmul_kernel.h) loads its inputs, calls one emitter
// per op in topological order, and stores the values the plan says leave the region, so a
// region of any elementwise and row ops is one kernel, with as many outputs as it needs.
//
// Values are computed in f32 (i32 for integer tensors) and rounded to the value's dtype once,
// when stored: a fused region rounds once where the unfused graph rounds after every op.
#pragma once

#include <vector>

#include "metile/dsl/dsl.h"
#include "metile/graph/graph_ir.h"

namespace metile::graph {

// Where the elements an emitter computes sit in the op's last two axes: `row` (the index
// along the second-to-last axis) and `column` (along the last axis), broadcast against the
// values. causal_mask reads them.
struct TilePosition {
  dsl::Value row;
  dsl::Value column;
};

// An elementwise op (FusionClass Elementwise) of `operands` (tiles or scalars, broadcast).
dsl::Value emit_elementwise(const Op& op, const std::vector<dsl::Value>& operands,
                            const TilePosition& position);

// A row op along the last axis of `row` (a 1-D tile whose lanes where `in_row` is false are
// padding): rms_norm (operands row, weight) and softmax give a row; sum, max and mean give
// the row's scalar. `columns` is the number of real lanes.
dsl::Value emit_row_op(const Op& op, const std::vector<dsl::Value>& operands,
                       const dsl::Value& in_row, int64_t columns);

// The dtype a graph value is computed in inside a kernel, and the dtype it is stored as.
dsl::DType compute_dtype(DType dtype);
dsl::DType storage_dtype(DType dtype);

}  // namespace metile::graph
