// Which ops may share one kernel. Deliberately simple; the rules are:
//
//  1. transpose and flash_attention (Opaque) are region boundaries: a layout change, or a
//     discovered composite op with its own kernel, runs alone.
//  2. matmul never absorbs producers: its operands are loaded by the GEMM mainloop.
//  3. matmul absorbs consumers only as an epilogue: elementwise ops whose output has the
//     matmul's output shape (the tile the kernel holds). Several matmuls of one output shape
//     may share an epilogue (e.g. silu(x @ gate) * (x @ up)).
//  4. a row reduction (rms_norm, softmax, sum, max, mean) needs the whole row along its axis
//     in one kernel. Elementwise producers may be computed into that row; consumers may use
//     the row or the reduced result (their output shape is the row's shape or the reduced
//     shape); further reductions must reduce the same row (same input shape, same axis).
//  5. one region holds either matmuls or row reductions, never both, so that its domain
//     (rows of one shape, or output tiles of one shape) is a single iteration space.
//  6. a region is convex: no dataflow path leaves it and comes back.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metile/graph/graph_ir.h"
#include "metile/graph/reachability.h"

namespace metile::graph {

// The iteration space an op imposes on a region.
struct FusionDomain {
  enum class Kind { Free, Row, Tile, Boundary };
  Kind kind = Kind::Free;
  Shape shape;        // Row: the reduced tensor's shape; Tile: the matmul output shape
  int64_t axis = -1;  // Row only

  std::string str() const;  // "row (1, 2048) axis 1", "tile (64, 64)", "free"
  bool operator==(const FusionDomain&) const = default;
};

FusionDomain fusion_domain(const Graph& graph, int op);

// Rule 5: may ops of these two domains share a region?
bool domains_compatible(const FusionDomain& a, const FusionDomain& b);

// Rules 1-4 for `downstream`, reached from `upstream` by a dataflow path, in one region:
// nullopt when legal, otherwise the broken rule.
std::optional<std::string> path_violation(const Graph& graph, int upstream, int downstream);

// Every rule above for a whole region (op ids): nullopt when legal, otherwise the first
// broken rule found. Used to check plans, not to build them.
std::optional<std::string> region_violation(const Graph& graph, const Reachability& reach,
                                            const std::vector<int>& ops);

// "%3 = add" for messages.
std::string op_label(const Graph& graph, int op);

}  // namespace metile::graph
