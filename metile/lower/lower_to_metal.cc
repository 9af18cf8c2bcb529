#include "metile/lower/lower_to_metal.h"

namespace metile::lower {

LoweringResult lower_to_metal(const ir::Kernel& tile, const ThreadPlan& plan,
                              const target::Target& target) {
  throw NotSupported("lower_to_metal: kernel '" + tile.name + "' cannot be lowered yet");
}

}  // namespace metile::lower
