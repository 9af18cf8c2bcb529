// Small queries over traced Tile IR, shared by the DSL tests.
#pragma once

#include <vector>

#include "metile/ir/ir.h"

namespace metile::test {

// The kinds of the ops directly in `b`, in order.
inline std::vector<ir::OpKind> kinds(const ir::Block& b) {
  std::vector<ir::OpKind> r;
  for (const ir::Op& op : b.ops) r.push_back(op.kind);
  return r;
}

// Every op of `kind` in the kernel, nested regions included, outer first.
inline std::vector<const ir::Op*> ops_of(const ir::Kernel& k, ir::OpKind kind) {
  std::vector<const ir::Op*> r;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind == kind) r.push_back(&op);
  });
  return r;
}

// The op that defines value v (nullptr for block arguments).
inline const ir::Op* producer(const ir::Kernel& k, ir::ValueId v) {
  const ir::Op* found = nullptr;
  ir::walk(k.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results)
      if (r == v) found = &op;
  });
  return found;
}

}  // namespace metile::test
