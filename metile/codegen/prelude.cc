#include "metile/codegen/prelude.h"

namespace metile::codegen {

void Prelude::add(std::string_view name, ir::DType t, std::string definition) {
  helpers_.try_emplace({std::string(name), t}, std::move(definition));
}

std::string Prelude::text() const {
  std::string out;
  for (const auto& [key, definition] : helpers_) out += definition;
  return out;
}

}  // namespace metile::codegen
