#include "metile/ir/ownership.h"

namespace metile::ir {

std::string_view owner_name(Owner o) {
  switch (o) {
    case Owner::None:
      return "none";
    case Owner::Uniform:
      return "uniform";
    case Owner::Implicit:
      return "implicit";
    case Owner::Explicit:
      return "explicit";
    case Owner::Unowned:
      return "unowned";
  }
  return "?";
}

const ThreadLayout* OwnershipMap::layout(ValueId v) const {
  const std::optional<ThreadLayout>& layout = layouts_.at(static_cast<size_t>(v));
  return layout ? &*layout : nullptr;
}

void OwnershipMap::set(ValueId v, Owner owner, std::optional<ThreadLayout> layout) {
  owners_.at(static_cast<size_t>(v)) = owner;
  layouts_.at(static_cast<size_t>(v)) = std::move(layout);
}

}  // namespace metile::ir
