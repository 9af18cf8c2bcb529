// Compiling and launching: compile(kernel) runs the pipeline for a device and returns a
// CompiledKernel (source, ABI, execution report) whose launch() runs it. The GIL is
// released while compiling and while a launch runs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <vector>

#include "dtype_names.h"
#include "init.h"
#include "launch_args.h"
#include "metile/compile.h"
#include "metile/ir/printer.h"
#include "metile/tune/cost_model.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace metile::python {

namespace {
// The Python handle of a compiled kernel (CompiledKernel is immutable and shared).
struct CompiledHandle {
  std::shared_ptr<const CompiledKernel> kernel;
};

// A bad mode name is the caller's argument error (ValueError), not a kernel's.
MathMode math_from_name(const std::string& name) {
  try {
    return math_mode_from_name(name);
  } catch (const UserError& e) {
    throw nb::value_error(e.what());
  }
}
// Builds a checked Schedule; a control outside its contract is the caller's argument error
// (ValueError), as a bad math mode is.
void init_schedule(schedule::Schedule* s, const std::string& backend,
                   std::optional<int> num_simdgroups, const std::string& staging,
                   std::optional<int> vector_width, std::optional<bool> double_buffer,
                   const std::string& route) {
  try {
    schedule::Schedule checked;
    checked.backend = schedule::backend_from_name(backend);
    checked.num_simdgroups = num_simdgroups;
    checked.staging = schedule::staging_from_name(staging);
    checked.vector_width = vector_width;
    checked.double_buffer = double_buffer;
    checked.route = schedule::route_from_name(route);
    schedule::check_schedule(checked);
    new (s) schedule::Schedule(checked);
  } catch (const UserError& e) {
    throw nb::value_error(e.what());
  }
}
}  // namespace

void init_compile(nb::module_& m) {
  nb::class_<BufferView>(m, "BufferView",
                         "Caller memory as a launch argument: address, length, dtype. It is "
                         "copied to the device before the launch and back if the kernel writes it.")
      .def(
          "__init__",
          [](BufferView* v, uintptr_t data, int64_t bytes, const std::string& dtype) {
            new (v) BufferView{reinterpret_cast<void*>(data), bytes, dtype_from_name(dtype)};
          },
          "data"_a, "bytes"_a, "dtype"_a,
          "Memory the device can address (host memory for the host device).")
      .def_prop_ro(
          "bytes", [](const BufferView& v) { return v.bytes; }, "The length in bytes.");

  nb::class_<schedule::Schedule>(m, "Schedule",
                                 "metile::Schedule: the execution requirements of a compile "
                                 "(python/metile/schedule.py is the user's constructor).")
      .def("__init__", &init_schedule, "backend"_a = "auto", "num_simdgroups"_a = nb::none(),
           "staging"_a = "auto", "vector_width"_a = nb::none(), "double_buffer"_a = nb::none(),
           "route"_a = "source", "Checks each control against its contract (ValueError naming it).")
      .def(
          "key", [](const schedule::Schedule& s) { return s.key(); },
          "The schedule's part of the compilation cache key.");

  nb::class_<CompiledHandle>(m, "CompiledKernel", "A kernel compiled for a device.")
      .def_prop_ro(
          "name", [](const CompiledHandle& h) { return h.kernel->name(); }, "The kernel's name.")
      .def_prop_ro(
          "source", [](const CompiledHandle& h) { return h.kernel->source(); },
          "The emitted source (MSL, or CUDA C++ on the cuda device).")
      .def_prop_ro(
          "abi", [](const CompiledHandle& h) { return abi_dict(h.kernel->abi()); },
          "The KernelABI: params, threads_per_threadgroup, threadgroup_bytes, grid_rule.")
      .def_prop_ro(
          "report_json", [](const CompiledHandle& h) { return h.kernel->report().str(); },
          "The ExecutionReport as JSON text.")
      .def_prop_ro(
          "schedule_plan_json",
          [](const CompiledHandle& h) { return h.kernel->schedule_plan().to_json().dump(); },
          "plan_schedule's SchedulePlan (decisions and reasons) as JSON text.")
      .def_prop_ro(
          "tile_ir", [](const CompiledHandle& h) { return ir::print(h.kernel->tile_ir()); },
          "The Tile IR after the target-independent passes, as text.")
      .def_prop_ro(
          "metal_ir", [](const CompiledHandle& h) { return ir::print(h.kernel->metal_ir()); },
          "The Metal IR after its passes, as text.")
      .def(
          "estimate_cost",
          [](const CompiledHandle& h, int64_t threadgroups) {
            const tune::OperationCounts counts = tune::count_operations(h.kernel->metal_ir());
            const auto& tpt = h.kernel->report().threads_per_threadgroup;
            const target::Target& t = h.kernel->device().target();
            const tune::CostEstimate e =
                tune::estimate_cost(counts, threadgroups, int64_t{tpt[0]} * tpt[1] * tpt[2], t);
            return nlohmann::json{{"target", t.name},
                                  {"counts_per_thread", tune::to_json(counts)},
                                  {"estimate", e.to_json()}}
                .dump();
          },
          "threadgroups"_a,
          "The operation-cost model's estimate of a launch of `threadgroups` threadgroups "
          "(metile/tune/cost_model.h), as JSON text.")
      .def_prop_ro(
          "device", [](const CompiledHandle& h) { return h.kernel->device().name(); },
          "The name of the device it was compiled for.")
      .def_prop_ro(
          "bounds_checks", [](const CompiledHandle& h) { return h.kernel->abi().bounds_checks; },
          "Whether the kernel records out-of-bounds accesses for its launch to raise "
          "(METILE_DEBUG=bounds on CUDA); its buffers' extents are hidden arguments.")
      .def(
          "launch",
          [](const CompiledHandle& h, std::array<int64_t, 3> grid, const nb::list& args,
             uintptr_t stream,
             bool wait) { return launch_on_stream(*h.kernel, grid, args, stream, wait); },
          "grid"_a, "args"_a, "stream"_a = 0, "wait"_a = true, kLaunchDoc);

  m.def(
      "compile",
      [](const ir::Kernel& kernel, const std::string& device, const std::string& math,
         std::optional<schedule::Schedule> schedule, std::optional<bool> bounds_checks) {
        CompileOptions options;
        options.device = device;
        options.math = math_from_name(math);
        options.schedule = schedule;
        options.bounds_checks = bounds_checks;
        ir::Kernel copy = kernel;
        CompiledHandle handle;
        {
          nb::gil_scoped_release release;
          handle.kernel = compile(std::move(copy), options);
        }
        raise_core_warnings();  // an untrusted compiled-object cache, say
        return handle;
      },
      "kernel"_a, "device"_a = "", "math"_a = "default", "schedule"_a = nb::none(),
      "bounds_checks"_a = nb::none(),
      "Compiles a Tile IR kernel for a device (empty: the default device), emitting for the "
      "device's target; compiled code is cached in process and on disk. "
      "math: default, strict (STRICT_MATH) or relaxed (RELAXED_PRECISION). "
      "schedule: the SCHEDULE's requirements (a Schedule), None for every control automatic. "
      "bounds_checks: every device access checked against its buffer's extent (CUDA; the host "
      "checks always), None for METILE_DEBUG's choice (`bounds` in its list).");
}

}  // namespace metile::python
