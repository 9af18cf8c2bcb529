// The TMA tensor maps and the persistent grid of a warp-specialised sm90 kernel
// (KernelABI::tensor_maps and ::persistent, docs/hopper.md), built at each launch from the
// bound arguments: cuTensorMapEncodeTiled over the buffer's device address, the tensor's
// extents (scalar arguments or constants; rows are `inner` elements apart), the ABI's box, 128-byte
// swizzling and zero fill past the edges.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/cuda/driver_api.h"
#include "metile/runtime/kernel_args.h"

namespace metile::runtime::cuda {

// CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) TensorMap {
  std::array<unsigned char, 128> bytes{};
};

// A tensor map's extent: its scalar argument (an i32) or its constant.
int64_t abi_extent(std::span<const BoundArg> bound, const codegen::AbiExtent& e);

// One map per KernelABI::tensor_maps entry; `addresses` holds each buffer argument's device
// address. UserError naming the kernel and the tensor when TMA cannot describe it (a row stride
// or base address not a multiple of 16 bytes, an extent past 2^32) or the driver refuses it.
std::vector<TensorMap> encode_tensor_maps(const DriverApi& api, const codegen::KernelABI& abi,
                                          std::span<const BoundArg> bound,
                                          std::span<const CUdeviceptr> addresses);

// The launch grid of a persistent kernel: min(tiles, cores) workers along x, where tiles
// covers the output (rows, columns scalar arguments) in block_m x block_n tiles. UserError when
// the caller's grid does not cover every tile (a persistent kernel visits each tile once).
std::array<unsigned, 3> persistent_grid(const codegen::KernelABI& abi,
                                        std::span<const BoundArg> bound,
                                        const std::array<unsigned, 3>& grid, int cores);

}  // namespace metile::runtime::cuda
