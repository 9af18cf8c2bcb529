// The emitters: Metal IR in, source text and its KernelABI out (DESIGN.md, "Kernel shape and
// ABI"). Each target language is a dialect of one C-style emitter (c_emitter.h).
#pragma once

#include <string>

#include "metile/codegen/kernel_abi.h"
#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::codegen {

struct EmittedKernel {
  std::string source;
  KernelABI abi;
};

// Metal Shading Language for an Apple target (or the host emulator, which runs that MSL).
// Throws UserError (or NotSupported) naming the op on anything it cannot render; never drops
// an op silently.
EmittedKernel emit_msl(const ir::Kernel& metal, const target::Target& target);

}  // namespace metile::codegen
