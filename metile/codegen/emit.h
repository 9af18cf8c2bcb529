// The emitter: Metal IR in, source text and its KernelABI out (DESIGN.md, "Kernel shape and
// ABI"). Each target language is a dialect (dialect.h) of one C-style emitter (c_emitter.h).
#pragma once

#include <string>

#include "metile/codegen/dialect.h"
#include "metile/codegen/kernel_abi.h"
#include "metile/codegen/renderer.h"
#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::codegen {

struct EmittedKernel {
  std::string source;
  KernelABI abi;
};

// Which renderer writes a CUDA target's kernel: the CUDA C++ dialect (NVRTC compiles it), or
// the PTX renderer (the driver compiles it). Apple targets and the host take Source only.
enum class RenderRoute { Source, Ptx };

// The dialect of the target's language: MSL for the Apple targets and the host emulator,
// CUDA for the CUDA targets.
const CDialect& dialect_for(const target::Target& target);

// The kernel in the target's language (dialect_for); for the host target, followed by its
// work-group function or the reason it has none (host/workgroup_emitter.h). Throws UserError (or
// NotSupported) naming the op on anything it cannot render; never drops an op silently.
EmittedKernel emit(const ir::Kernel& metal, const target::Target& target,
                   RenderRoute route = RenderRoute::Source, const EmitOptions& options = {});

// The kernel in the words of `dialect`, checked against the limits of `target`: what emit
// does once it has picked the dialect, open for dialects that no target names yet (tests).
EmittedKernel emit_in_dialect(const ir::Kernel& metal, const CDialect& dialect,
                              const target::Target& target, const EmitOptions& options = {});

}  // namespace metile::codegen
