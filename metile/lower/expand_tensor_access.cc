#include "metile/lower/expand_tensor_access.h"

namespace metile::lower {

ir::Kernel expand_tensor_access(ir::Kernel tile) {
  ir::walk(tile.body, [](const ir::Op& op) {
    if (op.kind == ir::OpKind::MakeTensor)
      throw NotSupported("tensor: descriptor expansion is being built", op.loc);
  });
  return tile;
}

}  // namespace metile::lower
