#include "metile/codegen/prelude.h"

namespace metile::codegen {

void Prelude::add(std::string_view name, ir::DType t, std::string definition) {
  helpers_.try_emplace({std::string(name), t}, std::move(definition));
}

void Prelude::add_type(std::string_view name, std::string definition) {
  types_.try_emplace(std::string(name), std::move(definition));
}

std::string Prelude::text() const {
  std::string out;
  for (const auto& [name, definition] : types_) out += definition;
  for (const auto& [key, definition] : helpers_) out += definition;
  return out;
}

}  // namespace metile::codegen
