// Launch arguments: the grid and one value per kernel parameter, checked against the
// kernel's ABI before any device sees them.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <variant>
#include <vector>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/buffer.h"

namespace metile::runtime {

// Threadgroups per dimension (one threadgroup per program).
struct Grid {
  uint32_t x = 1, y = 1, z = 1;
};

using KernelArg = std::variant<std::reference_wrapper<Buffer>, int32_t, uint32_t, int64_t, float>;

// An argument converted to its parameter's type: a buffer, or the scalar's bytes as the
// kernel reads them (i32/u32/i64/f32, f16/bf16 bits, i1 as one byte).
struct BoundArg {
  Buffer* buffer = nullptr;
  alignas(8) unsigned char scalar[8] = {};
};

// Checks count, kinds, dtypes and scalar ranges against `abi`; UserError messages name
// the kernel and the parameter.
std::vector<BoundArg> bind_kernel_args(const codegen::KernelABI& abi,
                                       std::span<const KernelArg> args);

}  // namespace metile::runtime
