#include "metile/codegen/emit.h"

#include "metile/codegen/abi_builder.h"
#include "metile/codegen/c_emitter.h"
#include "metile/codegen/cuda/cuda_dialect.h"
#include "metile/codegen/entry_wrapper.h"
#include "metile/codegen/msl/msl_dialect.h"
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

EmittedKernel emit(const ir::Kernel& metal, const target::Target& target) {
  return emit_in_dialect(metal, dialect_for(target), target);
}

// The source layout every dialect shares: header, helpers, body function, entry wrapper.
EmittedKernel emit_in_dialect(const ir::Kernel& kernel, const CDialect& dialect,
                              const target::Target& target) {
  const std::string language(dialect.table().language);
  if (kernel.dialect != ir::Dialect::Metal)
    throw UserError("emit " + language + ": kernel '" + kernel.name + "' is " +
                    std::string(ir::dialect_name(kernel.dialect)) +
                    " IR; the emitter takes Metal IR (lower it first)");
  if (!is_usable_identifier(kernel.name, dialect))
    throw UserError("emit " + language + ": kernel name '" + kernel.name +
                    "' is not a usable identifier");
  ir::verify_or_throw(kernel, "");
  EmittedKernel out;
  out.abi = build_abi(kernel);
  if (out.abi.threads_total() > target.max_threads_per_threadgroup)
    throw UserError("emit " + language + ": kernel '" + kernel.name + "' uses " +
                    std::to_string(out.abi.threads_total()) + " threads per threadgroup; target " +
                    target.name + " allows " + std::to_string(target.max_threads_per_threadgroup));
  if (out.abi.threadgroup_bytes > target.threadgroup_memory_bytes)
    throw UserError("emit " + language + ": kernel '" + kernel.name + "' needs " +
                    std::to_string(out.abi.threadgroup_bytes) +
                    " bytes of threadgroup memory; target " + target.name + " has " +
                    std::to_string(target.threadgroup_memory_bytes));
  CEmitter emitter(kernel, dialect, target);
  const std::string body = emitter.body();
  const std::string prelude = emitter.prelude().text();
  out.source = std::string(dialect.table().header) + "\n" +
               (prelude.empty() ? "" : prelude + "\n") + body_signature(out.abi, dialect) + " {\n" +
               body + "}\n\n" + entry_wrapper(out.abi, dialect);
  return out;
}

}  // namespace metile::codegen
