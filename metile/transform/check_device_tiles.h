#pragma once

#include "metile/ir/ir.h"

namespace metile::transform {

// Checks a Tile IR kernel's device tiles (device_tile_load / device_tile_store, seed 002's
// "Direct device tiles and masked tails") against the contracts lowering relies on:
//
// - scratch: the scratch operand is a metile.shared allocation itself (not an offset alias),
//   and nothing but device tile accesses uses that allocation (no scalar load or store, no
//   matrix view, no pointer offset), since the compiler places its own barriers around it;
// - read and write: a device buffer that matrix operations (device tiles, matrix_load,
//   matrix_store) access is not both read and written in the kernel, through any pointer
//   derived from it; metile.barrier() orders threadgroup memory only, so it cannot make that
//   safe.
//
// A violation is a UserError naming the kernel, the op and its line. Kernels without device
// tiles or device matrix accesses pass unchecked.
void check_device_tiles(const ir::Kernel& kernel);

}  // namespace metile::transform
