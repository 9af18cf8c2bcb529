#include "launch_args.h"

#include <nanobind/stl/string.h>

#include <string>
#include <utility>
#include <vector>

#include "dtype_names.h"
#include "metile/support/errors.h"

namespace nb = nanobind;

namespace metile::python {

nb::dict abi_dict(const codegen::KernelABI& abi) {
  nb::list params;
  for (const codegen::AbiParam& p : abi.params) {
    nb::dict d;
    d["name"] = p.name;
    d["kind"] = p.kind == codegen::AbiParam::Kind::Buffer ? "buffer" : "scalar";
    d["dtype"] = std::string(ir::dtype_name(p.dtype));
    d["access"] = p.access;
    params.append(d);
  }
  nb::dict d;
  d["kernel_name"] = abi.kernel_name;
  d["body_name"] = abi.body_name;
  d["params"] = params;
  d["threads_per_threadgroup"] =
      nb::make_tuple(abi.threads_per_threadgroup[0], abi.threads_per_threadgroup[1],
                     abi.threads_per_threadgroup[2]);
  d["threadgroup_bytes"] = abi.threadgroup_bytes;
  d["grid_rule"] = abi.grid_rule;
  d["bounds_checks"] = abi.bounds_checks;
  const auto extent = [](const codegen::AbiExtent& e) {
    nb::dict x;
    x["param"] = e.param;
    x["value"] = e.value;
    return x;
  };
  nb::list maps;
  for (const codegen::TensorMapParam& m : abi.tensor_maps) {
    nb::dict x;
    x["buffer"] = m.buffer;
    x["outer"] = extent(m.outer);
    x["inner"] = extent(m.inner);
    x["box_outer"] = m.box_outer;
    x["box_inner"] = m.box_inner;
    maps.append(x);
  }
  d["tensor_maps"] = maps;
  if (abi.persistent) {
    nb::dict x;
    x["rows"] = extent(abi.persistent->rows);
    x["columns"] = extent(abi.persistent->columns);
    x["block_m"] = abi.persistent->block_m;
    x["block_n"] = abi.persistent->block_n;
    d["persistent"] = x;
  } else {
    d["persistent"] = nb::none();
  }
  return d;
}

namespace {
// abi[key] as T; ValueError naming `where` and the key when it is missing or not a T.
template <class T>
T field(const nb::dict& abi, const char* key, const std::string& where) {
  if (!abi.contains(key)) throw nb::value_error((where + " has no '" + key + "'").c_str());
  try {
    return nb::cast<T>(abi[key]);
  } catch (const nb::cast_error&) {
    throw nb::value_error((where + "'s '" + key + "' has the wrong type").c_str());
  }
}

// The dicts of list abi[key], each with the place a message names it by ("the ABI's
// params[2]"); ValueError when one is not a dict.
std::vector<std::pair<nb::dict, std::string>> dicts(const nb::dict& abi, const char* key) {
  const nb::list list = field<nb::list>(abi, key, "the ABI");
  std::vector<std::pair<nb::dict, std::string>> r;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string where = "the ABI's " + std::string(key) + "[" + std::to_string(i) + "]";
    if (!nb::isinstance<nb::dict>(list[i]))
      throw nb::value_error((where + " is not a dict").c_str());
    r.emplace_back(nb::cast<nb::dict>(list[i]), std::move(where));
  }
  return r;
}
}  // namespace

codegen::KernelABI abi_from_dict(const nb::dict& d) {
  codegen::KernelABI abi;
  abi.kernel_name = field<std::string>(d, "kernel_name", "the ABI");
  abi.body_name = field<std::string>(d, "body_name", "the ABI");
  for (const auto& [p, where] : dicts(d, "params")) {
    codegen::AbiParam param;
    param.name = field<std::string>(p, "name", where);
    const std::string kind = field<std::string>(p, "kind", where);
    if (kind != "buffer" && kind != "scalar")
      throw nb::value_error((where + "'s kind is '" + kind + "', not buffer or scalar").c_str());
    param.kind =
        kind == "buffer" ? codegen::AbiParam::Kind::Buffer : codegen::AbiParam::Kind::Scalar;
    const std::string dtype = field<std::string>(p, "dtype", where);
    try {
      param.dtype = dtype_from_name(dtype);
    } catch (const UserError& e) {
      throw nb::value_error((where + ": " + e.what()).c_str());
    }
    param.access = field<std::string>(p, "access", where);
    abi.params.push_back(std::move(param));
  }
  const nb::sequence threads = field<nb::sequence>(d, "threads_per_threadgroup", "the ABI");
  if (nb::len(threads) != 3)
    throw nb::value_error("the ABI's 'threads_per_threadgroup' must have 3 entries");
  for (size_t i = 0; i < 3; ++i) {
    const int n = nb::cast<int>(threads[i]);
    if (n < 1) throw nb::value_error("the ABI's 'threads_per_threadgroup' must be positive");
    abi.threads_per_threadgroup[i] = n;
  }
  abi.threadgroup_bytes = field<int64_t>(d, "threadgroup_bytes", "the ABI");
  if (abi.threadgroup_bytes < 0)
    throw nb::value_error("the ABI's 'threadgroup_bytes' must not be negative");
  abi.grid_rule = field<std::string>(d, "grid_rule", "the ABI");
  // sm90's tensor maps and persistent tiles (docs/hopper.md); an ABI exported before they
  // existed has neither.
  const auto extent = [](const nb::dict& x, const char* key, const std::string& where) {
    const nb::dict e = field<nb::dict>(x, key, where);
    const std::string at = where + "'s '" + key + "'";
    return codegen::AbiExtent{field<int>(e, "param", at), field<int64_t>(e, "value", at)};
  };
  if (d.contains("tensor_maps"))
    for (const auto& [m, where] : dicts(d, "tensor_maps"))
      abi.tensor_maps.push_back({field<int>(m, "buffer", where), extent(m, "outer", where),
                                 extent(m, "inner", where), field<int64_t>(m, "box_outer", where),
                                 field<int64_t>(m, "box_inner", where)});
  // Recorded bounds checks (METILE_DEBUG=bounds); an ABI exported before them has none.
  if (d.contains("bounds_checks")) abi.bounds_checks = field<bool>(d, "bounds_checks", "the ABI");
  if (d.contains("persistent") && !d["persistent"].is_none()) {
    const nb::dict p = field<nb::dict>(d, "persistent", "the ABI");
    const std::string where = "the ABI's persistent";
    abi.persistent = codegen::PersistentTiles{extent(p, "rows", where), extent(p, "columns", where),
                                              field<int64_t>(p, "block_m", where),
                                              field<int64_t>(p, "block_n", where)};
  }
  return abi;
}

std::vector<KernelArg> launch_args(const nb::list& args) {
  std::vector<KernelArg> r;
  r.reserve(args.size());
  for (nb::handle a : args) {
    if (nb::isinstance<BufferView>(a))
      r.emplace_back(nb::cast<BufferView>(a));
    else if (nb::isinstance<runtime::Buffer>(a))
      r.emplace_back(nb::cast<runtime::Buffer>(a));
    else if (PyBool_Check(a.ptr()) || PyLong_Check(a.ptr()))
      r.emplace_back(nb::cast<int64_t>(a));
    else if (PyFloat_Check(a.ptr()))
      r.emplace_back(nb::cast<double>(a));
    else
      throw nb::type_error("launch arguments are BufferView, DeviceBuffer, int or float");
  }
  return r;
}

namespace {
runtime::LaunchTiming run(const CompiledKernel& kernel, std::array<int64_t, 3> grid,
                          std::span<const KernelArg> args, const runtime::LaunchOptions& options) {
  return kernel.launch(grid, args, options);
}

runtime::LaunchTiming run(const runtime::CompiledKernel& kernel, std::array<int64_t, 3> grid,
                          std::span<const KernelArg> args, const runtime::LaunchOptions& options) {
  return metile::launch(kernel, grid, args, options);
}

template <class Kernel>
nb::object launch_converted(const Kernel& kernel, std::array<int64_t, 3> grid, const nb::list& args,
                            uintptr_t stream, bool wait) {
  std::vector<KernelArg> converted = launch_args(args);
  runtime::LaunchTiming timing;
  {
    nb::gil_scoped_release release;
    timing = run(kernel, grid, converted, runtime::LaunchOptions{stream, wait});
  }
  return wait ? nb::cast(timing.elapsed_ms) : nb::none();
}
}  // namespace

nb::object launch_on_stream(const CompiledKernel& kernel, std::array<int64_t, 3> grid,
                            const nb::list& args, uintptr_t stream, bool wait) {
  return launch_converted(kernel, grid, args, stream, wait);
}

nb::object launch_on_stream(const runtime::CompiledKernel& kernel, std::array<int64_t, 3> grid,
                            const nb::list& args, uintptr_t stream, bool wait) {
  return launch_converted(kernel, grid, args, stream, wait);
}

}  // namespace metile::python
