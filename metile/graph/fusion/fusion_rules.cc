#include "metile/graph/fusion/fusion_rules.h"

namespace metile::graph {

std::string op_label(const Graph& graph, int op) {
  return graph.value(graph.op(op).output).ref() + " = " + std::string(graph.op(op).name());
}

std::string FusionDomain::str() const {
  switch (kind) {
    case Kind::Free:
      return "free";
    case Kind::Row:
      return "row " + shape_str(shape) + " axis " + std::to_string(axis);
    case Kind::Tile:
      return "tile " + shape_str(shape);
    case Kind::Boundary:
      return "boundary";
  }
  return "?";
}

FusionDomain fusion_domain(const Graph& graph, int op_id) {
  const Op& op = graph.op(op_id);
  switch (fusion_class(op.kind)) {
    case FusionClass::Elementwise:
      return {};
    case FusionClass::RowReduction:
      return {FusionDomain::Kind::Row, graph.spec(op.inputs[0]).shape, op.int_attr("axis")};
    case FusionClass::Matmul:
      return {FusionDomain::Kind::Tile, graph.spec(op.output).shape, -1};
    case FusionClass::Opaque:
      return {FusionDomain::Kind::Boundary, {}, -1};
  }
  return {};
}

bool domains_compatible(const FusionDomain& a, const FusionDomain& b) {
  using K = FusionDomain::Kind;
  if (a.kind == K::Boundary || b.kind == K::Boundary) return false;
  if (a.kind == K::Free || b.kind == K::Free) return true;
  return a == b;
}

std::optional<std::string> path_violation(const Graph& graph, int up, int down) {
  const Op& p = graph.op(up);
  const Op& q = graph.op(down);
  FusionClass pc = fusion_class(p.kind), qc = fusion_class(q.kind);
  const Shape& q_out = graph.spec(q.output).shape;
  auto both = op_label(graph, up) + " and " + op_label(graph, down);
  if (pc == FusionClass::Opaque || qc == FusionClass::Opaque)
    return std::string(pc == FusionClass::Opaque ? p.name() : q.name()) +
           " is a region boundary (" + both + ")";
  if (qc == FusionClass::Matmul) return "matmul does not fuse its producers (" + both + ")";
  if (pc == FusionClass::Matmul &&
      (qc != FusionClass::Elementwise || q_out != graph.spec(p.output).shape))
    return "a matmul epilogue is elementwise over the output tile " +
           shape_str(graph.spec(p.output).shape) + " (" + both + ")";
  if (pc == FusionClass::RowReduction) {
    FusionDomain row = fusion_domain(graph, up);
    if (qc == FusionClass::RowReduction && fusion_domain(graph, down) != row)
      return "reductions over different rows (" + row.str() + " vs " +
             fusion_domain(graph, down).str() + ") need separate kernels (" + both + ")";
    if (qc == FusionClass::Elementwise && q_out != row.shape && q_out != graph.spec(p.output).shape)
      return "a consumer of a row reduction must have the row's or the reduced shape, not " +
             shape_str(q_out) + " (" + both + ")";
  }
  return std::nullopt;
}

std::optional<std::string> region_violation(const Graph& graph, const Reachability& reach,
                                            const std::vector<int>& ops) {
  if (!reach.is_convex(ops)) return std::string("region is not convex");
  for (int a : ops) {
    for (int b : ops) {
      if (a == b) continue;
      if (reach.reaches(a, b))
        if (auto v = path_violation(graph, a, b)) return v;
      if (a < b && !domains_compatible(fusion_domain(graph, a), fusion_domain(graph, b)))
        return op_label(graph, a) + " (" + fusion_domain(graph, a).str() + ") and " +
               op_label(graph, b) + " (" + fusion_domain(graph, b).str() +
               ") cannot share a kernel";
    }
  }
  return std::nullopt;
}

}  // namespace metile::graph
