#include "metile/runtime/cuda/bounds_launch.h"

#include <array>
#include <cstring>
#include <string>

#include "metile/runtime/cuda/tensor_map.h"

namespace metile::runtime::cuda {

namespace {

// The index among the buffer parameters (the hidden extents' order) of parameter `param`.
size_t buffer_index(const codegen::KernelABI& abi, size_t param) {
  size_t index = 0;
  for (size_t i = 0; i < param && i < abi.params.size(); ++i)
    index += abi.params[i].kind == codegen::AbiParam::Kind::Buffer;
  return index;
}

// "buffer 0 ('X', 244 bytes)", as the host emulator names a buffer.
std::string describe_buffer(const codegen::KernelABI& abi, size_t param,
                            std::span<const unsigned long long> extents) {
  const size_t index = buffer_index(abi, param);
  const std::string size =
      index < extents.size() ? std::to_string(extents[index]) + " bytes" : "unknown size";
  return "buffer " + std::to_string(param) + " ('" + abi.params.at(param).name + "', " + size + ")";
}

}  // namespace

std::vector<unsigned long long> buffer_extents(const codegen::KernelABI& abi,
                                               std::span<const BoundArg> bound) {
  std::vector<unsigned long long> extents;
  for (size_t i = 0; i < abi.params.size() && i < bound.size(); ++i)
    if (abi.params[i].kind == codegen::AbiParam::Kind::Buffer)
      extents.push_back(bound[i].buffer ? bound[i].buffer->size_bytes() : 0);
  return extents;
}

KernelFaultError bounds_fault(const codegen::cuda_bounds::FaultRecord& record,
                              const codegen::KernelABI& abi,
                              std::span<const unsigned long long> extents) {
  const std::string& kernel = abi.kernel_name;
  const std::array<unsigned, 3> block = {record.block[0], record.block[1], record.block[2]};
  const std::string where = "threadgroup (" + std::to_string(block[0]) + "," +
                            std::to_string(block[1]) + "," + std::to_string(block[2]) +
                            "), thread " + std::to_string(record.thread);
  if (record.param >= abi.params.size() ||
      abi.params[record.param].kind != codegen::AbiParam::Kind::Buffer)
    throw InternalError("kernel '" + kernel + "' recorded an out-of-bounds access of parameter " +
                        std::to_string(record.param) + ", which is not one of its buffers");
  const size_t index = buffer_index(abi, record.param);
  const long long offset = record.byte_offset;
  const char* position =
      offset < 0 ? "is before the start of"
      : index < extents.size() && static_cast<unsigned long long>(offset) >= extents[index]
          ? "is past the end of"
          : "runs past the end of";
  const std::string& buffer = abi.params[record.param].name;
  std::string text = "out-of-bounds access in kernel '" + kernel + "' (" + where +
                     "): the access at byte offset " + std::to_string(offset) + " " + position +
                     " " + describe_buffer(abi, record.param, extents) + " (a " +
                     std::to_string(record.bytes) + "-byte " +
                     (record.is_write ? "write" : "read") + ")";
  FaultSite site{kernel, block, record.thread, buffer, offset};
  return KernelFaultError(std::move(text), abi.source_of_line(record.line), std::move(site));
}

void check_tensor_maps_fit(const codegen::KernelABI& abi, std::span<const BoundArg> bound,
                           std::span<const unsigned long long> extents) {
  for (const codegen::TensorMapParam& m : abi.tensor_maps) {
    const auto param = static_cast<size_t>(m.buffer);
    const int64_t outer = abi_extent(bound, m.outer), inner = abi_extent(bound, m.inner);
    if (outer < 1 || inner < 1) continue;  // an empty tensor is never copied
    const unsigned long long covers = static_cast<unsigned long long>(outer) *
                                      static_cast<unsigned long long>(inner) *
                                      ir::dtype_bytes(abi.params.at(param).dtype);
    const size_t index = buffer_index(abi, param);
    if (index >= extents.size() || covers <= extents[index]) continue;
    const std::string& buffer = abi.params[param].name;
    throw KernelFaultError(
        "out-of-bounds access in kernel '" + abi.kernel_name + "' (before the launch): the TMA " +
            "tensor map of '" + buffer + "' [" + std::to_string(outer) + ", " +
            std::to_string(inner) + "] covers " + std::to_string(covers) +
            " bytes, and the access at byte offset " + std::to_string(extents[index]) +
            " is past the end of " + describe_buffer(abi, param, extents),
        {},
        FaultSite{abi.kernel_name,
                  {0, 0, 0},
                  std::nullopt,
                  buffer,
                  static_cast<long long>(extents[index])});
  }
}

FaultRecordMemory::FaultRecordMemory(const Gpu& gpu) : gpu_(gpu) {
  gpu.check(gpu.api().cuMemAlloc(&address_, codegen::cuda_bounds::kRecordBytes), "cuMemAlloc");
  const std::array<unsigned char, codegen::cuda_bounds::kRecordBytes> zeros{};
  const CUresult r = gpu.api().cuMemcpyHtoD(address_, zeros.data(), zeros.size());
  if (r != CUDA_SUCCESS) {
    gpu.api().cuMemFree(address_);
    gpu.check(r, "cuMemcpyHtoD");
  }
}

FaultRecordMemory::~FaultRecordMemory() {
  // Nothing to report from a destructor; after a kernel fault the context is gone anyway.
  gpu_.api().cuMemFree(address_);
}

codegen::cuda_bounds::FaultRecord FaultRecordMemory::read(const std::string& kernel) const {
  codegen::cuda_bounds::FaultRecord record;
  gpu_.check(gpu_.api().cuMemcpyDtoH(&record, address_, sizeof record), "cuMemcpyDtoH", kernel);
  return record;
}

}  // namespace metile::runtime::cuda
