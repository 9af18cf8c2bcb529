#include "metile/codegen/abi_builder.h"

#include <limits>

#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

int64_t kernel_int(const ir::Kernel& k, const std::string& name) {
  auto it = k.attrs.find(name);
  const int64_t* v = it == k.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
  if (!v) throw UserError("kernel '" + k.name + "': needs an integer attribute " + name);
  return *v;
}

AbiParam abi_param(const ir::Kernel& k, const ir::Param& p) {
  const ir::Type& t = k.type(p.value);
  AbiParam a;
  a.name = p.name;
  a.dtype = t.dtype;
  if (t.is_pointer() && t.space == ir::AddressSpace::Device) {
    if (p.access != "read" && p.access != "write" && p.access != "read_write")
      throw UserError("kernel '" + k.name + "': buffer parameter '" + p.name +
                      "' needs access read, write or read_write, got '" + p.access + "'");
    a.kind = AbiParam::Kind::Buffer;
    a.access = p.access;
    return a;
  }
  if (!t.is_scalar())
    throw UserError("kernel '" + k.name + "': parameter '" + p.name + "' has type " + t.str() +
                    "; a kernel takes device buffers and scalars");
  a.kind = AbiParam::Kind::Scalar;
  return a;
}

// A kernel attribute holding a parameter index, or -1 - value for a constant.
AbiExtent abi_extent(const ir::Kernel& k, const std::string& name) {
  const int64_t code = kernel_int(k, name);
  if (code >= 0) {
    if (code >= static_cast<int64_t>(k.params.size()))
      throw UserError("kernel '" + k.name + "': " + name + " names parameter " +
                      std::to_string(code) + ", which does not exist");
    return {static_cast<int>(code), 0};
  }
  return {-1, -1 - code};
}

// The tensor maps a warp-specialised kernel takes (lower_dot_wgmma.cc writes them as kernel
// attributes tensor_maps = n and tensor_map<i>_<field>).
std::vector<TensorMapParam> tensor_maps(const ir::Kernel& k) {
  if (!k.attrs.count("tensor_maps")) return {};
  std::vector<TensorMapParam> maps(static_cast<size_t>(kernel_int(k, "tensor_maps")));
  for (size_t i = 0; i < maps.size(); ++i) {
    const std::string at = "tensor_map" + std::to_string(i) + "_";
    TensorMapParam& m = maps[i];
    m.buffer = static_cast<int>(kernel_int(k, at + "buffer"));
    if (m.buffer < 0 || m.buffer >= static_cast<int>(k.params.size()))
      throw UserError("kernel '" + k.name + "': tensor map " + std::to_string(i) +
                      " names buffer parameter " + std::to_string(m.buffer) +
                      ", which does not exist");
    m.outer = abi_extent(k, at + "outer");
    m.inner = abi_extent(k, at + "inner");
    m.box_outer = kernel_int(k, at + "box_outer");
    m.box_inner = kernel_int(k, at + "box_inner");
  }
  return maps;
}

}  // namespace

KernelABI build_abi(const ir::Kernel& metal) {
  KernelABI abi;
  abi.kernel_name = metal.name;
  abi.body_name = metal.name + "_body";
  for (const ir::Param& p : metal.params) abi.params.push_back(abi_param(metal, p));
  abi.tensor_maps = tensor_maps(metal);
  if (metal.attrs.count("persistent_rows"))
    abi.persistent = PersistentTiles{
        abi_extent(metal, "persistent_rows"), abi_extent(metal, "persistent_columns"),
        kernel_int(metal, "persistent_block_m"), kernel_int(metal, "persistent_block_n")};
  const int64_t threads = kernel_int(metal, "threads_per_threadgroup");
  if (threads <= 0 || threads > std::numeric_limits<int>::max())
    throw UserError("kernel '" + metal.name + "': threads_per_threadgroup must be positive, got " +
                    std::to_string(threads));
  abi.threads_per_threadgroup = {static_cast<int>(threads), 1, 1};
  abi.threadgroup_bytes = kernel_int(metal, "threadgroup_bytes");
  if (abi.threadgroup_bytes < 0 || abi.threadgroup_bytes % 16 != 0)
    throw UserError("kernel '" + metal.name +
                    "': threadgroup_bytes must be a non-negative multiple of 16, got " +
                    std::to_string(abi.threadgroup_bytes));
  return abi;
}

}  // namespace metile::codegen
