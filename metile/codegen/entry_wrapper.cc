#include "metile/codegen/entry_wrapper.h"

#include <utility>
#include <vector>

#include "metile/codegen/c_types.h"
#include "metile/codegen/cuda/cuda_bounds.h"
#include "metile/codegen/value_names.h"

namespace metile::codegen {

namespace {

ir::Type param_type(const AbiParam& p) {
  return p.kind == AbiParam::Kind::Buffer ? ir::Type::ptr(p.dtype) : ir::Type::scalar(p.dtype);
}

std::string body_param(const AbiParam& p, const CDialect& dialect) {
  return type_name(param_type(p), dialect, p.access == "read") + " " +
         parameter_source_name(p.name, dialect);
}

std::string entry_param(const AbiParam& p, int index, const CDialect& dialect) {
  const DialectTable& d = dialect.table();
  std::string decl = p.kind == AbiParam::Kind::Buffer
                         ? body_param(p, dialect)
                         : std::string(d.scalar_entry_prefix) + type_name(param_type(p), dialect) +
                               std::string(d.scalar_entry_suffix) + " " +
                               parameter_source_name(p.name, dialect);
  // A language that binds parameters by position (CUDA) has no binding words.
  if (d.binding_prefix.empty()) return decl;
  return decl + std::string(d.binding_prefix) + std::to_string(index) +
         std::string(d.binding_suffix);
}

// The hidden parameters of recorded bounds checks (KernelABI::bounds_checks), as
// {declaration, name}: each buffer's extent, then the fault record.
std::vector<std::pair<std::string, std::string>> bounds_parameters(const KernelABI& abi,
                                                                   const CDialect& dialect) {
  std::vector<std::pair<std::string, std::string>> params;
  if (!abi.bounds_checks) return params;
  for (size_t i = 0; i < abi.params.size(); ++i)
    if (abi.params[i].kind == AbiParam::Kind::Buffer) {
      const std::string name = "metile_extent" + std::to_string(i);
      params.emplace_back(std::string(dialect.table().pointer_integer_type) + " " + name, name);
    }
  params.emplace_back(std::string(cuda_bounds::kRecordType) + " " + cuda_bounds::kRecordName,
                      cuda_bounds::kRecordName);
  return params;
}

std::string parameter_list(const std::vector<std::string>& params) {
  std::string out = "(";
  for (size_t i = 0; i < params.size(); ++i)
    out += "\n    " + params[i] + (i + 1 < params.size() ? "," : "");
  return out + ")";
}

}  // namespace

std::vector<std::string> body_parameters(const KernelABI& abi, const CDialect& dialect) {
  const DialectTable& d = dialect.table();
  std::vector<std::string> params;
  for (const AbiParam& p : abi.params) params.push_back(body_param(p, dialect));
  for (size_t i = 0; i < abi.tensor_maps.size(); ++i)
    params.push_back(dialect.tensor_map_param(static_cast<int64_t>(i), false));
  for (const auto& hidden : bounds_parameters(abi, dialect)) params.push_back(hidden.first);
  params.push_back(std::string(d.block_type) + " " + std::string(d.block_name));
  for (const GeometryArg& g : d.geometry)
    params.push_back(std::string(g.type) + " " + std::string(g.name));
  return params;
}

std::string body_signature(const KernelABI& abi, const CDialect& dialect) {
  return std::string(dialect.table().body_qualifier) + " void " + abi.body_name +
         parameter_list(body_parameters(abi, dialect));
}

std::string entry_wrapper(const KernelABI& abi, const CDialect& dialect) {
  const DialectTable& d = dialect.table();
  std::vector<std::string> params;
  for (size_t i = 0; i < abi.params.size(); ++i)
    params.push_back(entry_param(abi.params[i], static_cast<int>(i), dialect));
  for (size_t i = 0; i < abi.tensor_maps.size(); ++i)
    params.push_back(dialect.tensor_map_param(static_cast<int64_t>(i), true));
  const auto hidden = bounds_parameters(abi, dialect);
  for (const auto& param : hidden) params.push_back(param.first);
  std::string locals;
  for (const GeometryArg& g : d.geometry) {
    if (!g.entry_attribute.empty())
      params.push_back(std::string(g.type) + " " + std::string(g.name) + " " +
                       std::string(g.entry_attribute));
    else
      locals += "  const " + std::string(g.type) + " " + std::string(g.name) + " = " +
                std::string(g.entry_value) + ";\n";
  }
  std::string call = abi.body_name + "(";
  for (const AbiParam& p : abi.params) call += parameter_source_name(p.name, dialect) + ", ";
  for (size_t i = 0; i < abi.tensor_maps.size(); ++i)
    call += dialect.tensor_map_argument(static_cast<int64_t>(i)) + ", ";
  for (const auto& param : hidden) call += param.second + ", ";
  call += d.block_name;
  for (const GeometryArg& g : d.geometry) call += ", " + std::string(g.name);
  call += ");";
  return dialect.entry_qualifier(abi.threads_total(), abi.tensor_maps.size()) + " " +
         abi.kernel_name + parameter_list(params) + " {\n" + locals + "  " +
         dialect.threadgroup_block(abi.threadgroup_bytes) + "\n  " + call + "\n}\n";
}

}  // namespace metile::codegen
