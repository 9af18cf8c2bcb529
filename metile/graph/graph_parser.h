// The Graph IR's text form read back: parse_graph(graph.str()) rebuilds the graph, so a graph
// can be written by hand, stored, or produced by another tool.
//
//   graph {
//     %x = input : (4, 8) f32
//     %1 = softmax(%x) {axis = 1} : (4, 8) f32
//     outputs(%1)
//   }
//
// Op lines may come in any order; they are replayed through GraphBuilder in dependency order,
// so every shape and dtype rule applies. Each bad graph is a UserError naming the node: an
// unknown op, an operand no line defines (a missing input), a cycle, a result type that
// differs from the one the op computes, and the GraphBuilder errors themselves.
#pragma once

#include <string_view>

#include "metile/graph/graph_ir.h"

namespace metile::graph {

// flash_attention lines are refused: discovery makes that node under a certificate.
Graph parse_graph(std::string_view text);

}  // namespace metile::graph
