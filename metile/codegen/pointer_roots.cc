#include "metile/codegen/pointer_roots.h"

#include <array>

namespace metile::codegen {

using K = ir::OpKind;

// Grows to a fixed point because a loop body may feed a carried pointer before the loop's
// results are seen.
PointerRoots pointer_roots(const ir::Kernel& k) {
  PointerRoots roots;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.type(k.params[i].value).pointer) roots[k.params[i].value].insert(i);
  bool changed = true;
  auto join = [&](ir::ValueId into, ir::ValueId from) {
    const auto it = roots.find(from);
    if (it == roots.end() || !k.type(into).pointer) return;
    const std::set<size_t> add = it->second;  // roots[into] may rehash `it`'s node: copy
    for (size_t r : add) changed = roots[into].insert(r).second || changed;
  };
  while (changed) {
    changed = false;
    ir::walk(k.body, [&](const ir::Op& op) {
      switch (op.kind) {
        case K::PtrAdd:
          return join(op.results[0], op.operands[0]);
        case K::Cast:
          if (k.type(op.results[0]).pointer)
            changed = roots[op.results[0]].insert(kMadeFromInteger).second || changed;
          return;
        case K::Select:
          join(op.results[0], op.operands[1]);
          return join(op.results[0], op.operands[2]);
        case K::For: {
          const ir::Block& body = op.regions.at(0);
          const ir::Op& yield = body.ops.back();
          for (size_t i = 0; i < op.results.size(); ++i) {
            join(body.args[1 + i], op.operands[3 + i]);
            join(body.args[1 + i], yield.operands[i]);
            join(op.results[i], body.args[1 + i]);
          }
          return;
        }
        case K::While: {
          for (size_t i = 0; i < op.results.size(); ++i) {
            const std::array<ir::ValueId, 6> group = ir::while_carried(op, i);
            for (ir::ValueId a : group)
              for (ir::ValueId b : group) join(a, b);
          }
          return;
        }
        case K::If:
          for (const ir::Block& region : op.regions)
            for (size_t i = 0; i < op.results.size(); ++i)
              join(op.results[i], region.ops.back().operands[i]);
          return;
        default:
          return;
      }
    });
  }
  return roots;
}

int64_t access_bytes(const ir::Type& t) {
  const int64_t width = t.is_vector() ? t.shape.at(0) : 1;
  return ir::dtype_bytes(t.dtype) * (width == 3 ? 4 : width);
}

}  // namespace metile::codegen
