#include "metile/codegen/emit.h"

namespace metile::codegen {

// Replaced by the C-style emitter in the next commit; present so that users can link now.
EmittedKernel emit_msl(const ir::Kernel& metal, const target::Target& target) {
  throw NotSupported("emit_msl: the MSL emitter is being built (kernel '" + metal.name +
                     "', target " + target.name + ")");
}

}  // namespace metile::codegen
