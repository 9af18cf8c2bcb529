#include "metile/codegen/emit.h"

#include <algorithm>

#include "metile/codegen/abi_builder.h"
#include "metile/codegen/c_emitter.h"
#include "metile/codegen/cuda/cuda_dialect.h"
#include "metile/codegen/entry_wrapper.h"
#include "metile/codegen/host/workgroup_emitter.h"
#include "metile/codegen/msl/msl_dialect.h"
#include "metile/codegen/ptx/ptx_renderer.h"
#include "metile/codegen/value_names.h"
#include "metile/ir/verifier.h"
#include "metile/support/errors.h"

namespace metile::codegen {

const CDialect& dialect_for(const target::Target& target) {
  switch (target.language) {
    case target::Language::MSL:
      return msl_dialect();
    case target::Language::CUDA:
      return cuda_dialect();
  }
  throw InternalError("emit: target " + target.name + " has an unknown language");
}

namespace {

// The first SIMD-group collective or SIMD-group barrier of the kernel, or nullptr.
const ir::Op* first_simd_group_op(const ir::Kernel& kernel) {
  const ir::Op* found = nullptr;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    const bool simd_barrier = op.kind == ir::OpKind::Barrier && op.has_attr("scope") &&
                              op.str_attr("scope") == "simdgroup";
    if (!found && (ir::op_info(op.kind).rule == ir::TypeRule::SimdCollective || simd_barrier))
      found = &op;
  });
  return found;
}

// Rejects what the target cannot run correctly rather than emitting undefined behaviour.
void check_simd_groups(const ir::Kernel& kernel, const KernelABI& abi, const target::Target& target,
                       const std::string& language) {
  const int64_t threads = abi.threads_total();
  if (!target.collectives_need_whole_simd_groups || threads % target.simd_width == 0) return;
  if (const ir::Op* op = first_simd_group_op(kernel))
    throw NotSupported("emit " + language + ": kernel '" + kernel.name + "' runs " +
                           std::to_string(threads) + " threads per threadgroup, not a whole " +
                           "number of " + std::to_string(target.simd_width) +
                           "-wide SIMD groups, and uses " + std::string(ir::op_name(op->kind)) +
                           "; on target " + target.name +
                           " SIMD-group operations need whole SIMD groups (use num_threads = " +
                           std::to_string(target.simd_width) + " or more)",
                       op->loc);
}

// Metal has no way for a shader to stop with a message or print that meTile uses (Metal 3.2's
// os_log needs the app's logging setup), so an Apple GPU target rejects the debugging ops;
// the host emulator and CUDA run them.
void check_debugging_ops(const ir::Kernel& kernel, const target::Target& target) {
  if (target.language != target::Language::MSL || target.name == "host") return;
  ir::walk(kernel.body, [&](const ir::Op& op) {
    if (op.kind == ir::OpKind::AssertTrue || op.kind == ir::OpKind::Print)
      throw NotSupported(
          std::string(op.kind == ir::OpKind::AssertTrue ? "device_assert" : "device_print") +
              " is not supported on Apple GPUs (target " + target.name +
              "): Metal shaders cannot stop with a message or print; run the "
              "kernel on the host emulator (METILE_DEVICE=host) to debug it",
          op.loc);
  });
}

}  // namespace

EmittedKernel emit(const ir::Kernel& metal, const target::Target& target, RenderRoute route,
                   const EmitOptions& options) {
  check_debugging_ops(metal, target);
  if (route == RenderRoute::Ptx) {
    if (options.bounds_checks)
      throw NotSupported("METILE_DEBUG=bounds: kernel '" + metal.name +
                         "' takes the PTX route (Schedule(route=\"ptx\")), which has no bounds "
                         "checks; leave the route automatic to check its accesses");
    return ptx_renderer().render(metal, target);
  }
  // The host emulator checks every access in any case.
  EmitOptions source_options = options;
  source_options.bounds_checks = options.bounds_checks && target.name != "host";
  EmittedKernel out = emit_in_dialect(metal, dialect_for(target), target, source_options);
  // The host emulator also gets the kernel as a work-group function where it is eligible.
  if (target.name == "host") {
    WorkgroupFunction workgroup = emit_workgroup_function(metal, msl_dialect(), target, out.abi);
    const int lines_before =
        static_cast<int>(std::count(out.source.begin(), out.source.end(), '\n')) + 1;
    for (SourceLine l : workgroup.source_lines) {
      l.line += lines_before;
      out.abi.source_lines.push_back(std::move(l));
    }
    out.source += "\n" + workgroup.source;
  }
  return out;
}

KernelABI check_renderable(const ir::Kernel& kernel, const target::Target& target,
                           std::string_view language_view) {
  const std::string language(language_view);
  if (kernel.dialect != ir::Dialect::Metal)
    throw UserError("emit " + language + ": kernel '" + kernel.name + "' is " +
                    std::string(ir::dialect_name(kernel.dialect)) +
                    " IR; the emitter takes Metal IR (lower it first)");
  ir::verify_or_throw(kernel, "");
  KernelABI abi = build_abi(kernel);
  if (abi.threads_total() > target.max_threads_per_threadgroup)
    throw OutOfResources("emit " + language + ": kernel '" + kernel.name + "' uses " +
                         std::to_string(abi.threads_total()) + " threads per threadgroup; target " +
                         target.name + " allows " +
                         std::to_string(target.max_threads_per_threadgroup));
  if (abi.threadgroup_bytes > target.threadgroup_memory_bytes)
    throw OutOfResources("emit " + language + ": kernel '" + kernel.name + "' needs " +
                         std::to_string(abi.threadgroup_bytes) +
                         " bytes of threadgroup memory; target " + target.name + " has " +
                         std::to_string(target.threadgroup_memory_bytes));
  check_simd_groups(kernel, abi, target, language);
  return abi;
}

EmittedKernel emit_in_dialect(const ir::Kernel& kernel, const CDialect& dialect,
                              const target::Target& target, const EmitOptions& options) {
  return CRenderer(dialect).render(kernel, target, options);
}

EmittedKernel CRenderer::render(const ir::Kernel& kernel, const target::Target& target) const {
  return render(kernel, target, EmitOptions{});
}

// The source layout every dialect shares: header, helpers, body function, entry wrapper.
EmittedKernel CRenderer::render(const ir::Kernel& kernel, const target::Target& target,
                                const EmitOptions& options) const {
  const CDialect& dialect = dialect_;
  const std::string language(dialect.table().language);
  if (kernel.dialect == ir::Dialect::Metal && !is_usable_identifier(kernel.name, dialect))
    throw UserError("emit " + language + ": kernel name '" + kernel.name +
                    "' is not a usable identifier");
  EmittedKernel out;
  out.abi = check_renderable(kernel, target, language);
  out.abi.bounds_checks = options.bounds_checks;
  CEmitter emitter(kernel, dialect, target, options);
  const std::string body = emitter.body();
  const std::string prelude = emitter.prelude().text();
  out.source = std::string(dialect.table().header) + "\n" +
               (prelude.empty() ? "" : prelude + "\n") + body_signature(out.abi, dialect) + " {\n";
  const int lines_before_body =
      static_cast<int>(std::count(out.source.begin(), out.source.end(), '\n'));
  for (SourceLine l : emitter.source_lines()) {
    l.line += lines_before_body;
    out.abi.source_lines.push_back(std::move(l));
  }
  out.source += body + "}\n\n" + entry_wrapper(out.abi, dialect);
  return out;
}

}  // namespace metile::codegen
