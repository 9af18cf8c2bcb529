#include "metile/runtime/cuda/tensor_map.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "metile/support/errors.h"

namespace metile::runtime::cuda {

int64_t abi_extent(std::span<const BoundArg> bound, const codegen::AbiExtent& e) {
  if (e.param < 0) return e.value;
  int32_t v = 0;
  std::memcpy(&v, bound[static_cast<size_t>(e.param)].scalar, sizeof v);
  return v;
}

std::vector<TensorMap> encode_tensor_maps(const DriverApi& api, const codegen::KernelABI& abi,
                                          std::span<const BoundArg> bound,
                                          std::span<const CUdeviceptr> addresses) {
  std::vector<TensorMap> maps(abi.tensor_maps.size());
  if (maps.empty()) return maps;
  if (!api.cuTensorMapEncodeTiled)
    throw UserError("kernel '" + abi.kernel_name +
                    "' needs TMA tensor maps, and this CUDA driver lacks cuTensorMapEncodeTiled");
  for (size_t i = 0; i < maps.size(); ++i) {
    const codegen::TensorMapParam& m = abi.tensor_maps[i];
    const codegen::AbiParam& buffer = abi.params[static_cast<size_t>(m.buffer)];
    const int64_t element = ir::dtype_bytes(buffer.dtype);
    const int64_t outer = abi_extent(bound, m.outer), inner = abi_extent(bound, m.inner);
    const int64_t stride = inner * element;
    const CUdeviceptr base = addresses[static_cast<size_t>(m.buffer)];
    const std::string what = "kernel '" + abi.kernel_name + "': the TMA tensor map of '" +
                             buffer.name + "' [" + std::to_string(outer) + ", " +
                             std::to_string(inner) + "]";
    if (outer < 1 || inner < 1) continue;  // an empty tensor is never copied
    if (stride % 16 != 0 || base % 16 != 0)
      throw UserError(what + " needs its row stride (" + std::to_string(stride) +
                      " bytes) and base address to be multiples of 16 bytes (TMA's rule); "
                      "use backend='simdgroup' for this shape");
    const int data_type = buffer.dtype == ir::DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                          : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    const uint64_t dims[2] = {static_cast<uint64_t>(inner), static_cast<uint64_t>(outer)};
    const uint64_t strides[1] = {static_cast<uint64_t>(stride)};
    const uint32_t box[2] = {static_cast<uint32_t>(m.box_inner),
                             static_cast<uint32_t>(m.box_outer)};
    const uint32_t element_strides[2] = {1, 1};
    const CUresult r = api.cuTensorMapEncodeTiled(
        maps[i].bytes.data(), data_type, 2, reinterpret_cast<void*>(base), dims, strides, box,
        element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
      throw UserError(what + ": " + api.describe(r, "cuTensorMapEncodeTiled", abi.kernel_name));
  }
  return maps;
}

std::array<unsigned, 3> persistent_grid(const codegen::KernelABI& abi,
                                        std::span<const BoundArg> bound,
                                        const std::array<unsigned, 3>& grid, int cores) {
  const codegen::PersistentTiles& p = *abi.persistent;
  const int64_t rows = abi_extent(bound, p.rows), columns = abi_extent(bound, p.columns);
  const int64_t tiles_m = std::max<int64_t>(0, (rows + p.block_m - 1) / p.block_m);
  const int64_t tiles_n = std::max<int64_t>(0, (columns + p.block_n - 1) / p.block_n);
  if (grid[0] < tiles_m || grid[1] < tiles_n || grid[2] != 1)
    throw UserError("kernel '" + abi.kernel_name + "' is persistent (tensor_ops, wgmma_tma): its " +
                    "workers visit every " + std::to_string(p.block_m) + "x" +
                    std::to_string(p.block_n) + " output tile, so the grid must cover (" +
                    std::to_string(tiles_m) + ", " + std::to_string(tiles_n) + ", 1) tiles; got (" +
                    std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
                    std::to_string(grid[2]) + ")");
  const int64_t workers = std::min<int64_t>(tiles_m * tiles_n, cores);
  return {static_cast<unsigned>(workers), 1, 1};
}

}  // namespace metile::runtime::cuda
