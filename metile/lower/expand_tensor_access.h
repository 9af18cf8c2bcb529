// Tile IR -> Tile IR: tensor descriptors become pointer arithmetic. make_tensor, tensor_load
// and tensor_store are replaced by ptr_add over offsets sum(coord * stride) computed in i32,
// and masked load/store whose mask is the conjunction of 0 <= coord < dim over every axis
// (coordinates broadcast to the access shape). Kernels without descriptors are returned
// unchanged.
#pragma once

#include "metile/ir/pass_result.h"

namespace metile::lower {

ir::PassResult expand_tensor_access(ir::Kernel tile);

}  // namespace metile::lower
