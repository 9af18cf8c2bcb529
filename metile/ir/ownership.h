// Who owns each element of every tile of a Tile IR kernel (seed 004; DESIGN.md, "Tiles and
// ownership"). check_ownership (metile/transform/check_ownership.h) computes it and checks
// the rules; lowering reads it (PassContext::ownership).
//
// A kernel without explicit layouts keeps lowering's own plan: every tile is Implicit and
// has no layout here. Once any value has an explicit layout, every tile of the kernel has one
// size and one register count, and layout() answers for every tile: its explicit layout, or
// the identity of that geometry for Implicit and Uniform tiles (an implicit layout means
// identity when combined with an explicit one).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::ir {

enum class Owner : uint8_t {
  None,      // not a tile: a scalar, pointer or descriptor value
  Uniform,   // a tile whose elements are all one uniform scalar (a splat): any layout holds it
  Implicit,  // a tile nobody gave a layout
  Explicit,  // a tile owned by a ThreadLayout: arange {layout}, convert_layout, or values
             // computed from those
  Unowned,   // a tile built from a per-thread scalar: it has no owner, and combining it with an
             // explicitly owned tile is an error
};
std::string_view owner_name(Owner o);  // "uniform", "implicit", ...

// The shape every tile of a kernel with explicit layouts shares.
struct LayoutGeometry {
  int64_t elements = 0;
  int64_t thread_count = 0;
  int64_t elements_per_thread = 0;
};

class OwnershipMap {
 public:
  OwnershipMap() = default;
  explicit OwnershipMap(size_t values) : owners_(values, Owner::None), layouts_(values) {}

  Owner owner(ValueId v) const { return owners_.at(static_cast<size_t>(v)); }
  // The layout of a tile in a kernel with explicit layouts (see above); nullptr for values
  // that are not tiles and for every value of a kernel without explicit layouts.
  const ThreadLayout* layout(ValueId v) const;
  // Set when some value has an explicit layout.
  const std::optional<LayoutGeometry>& geometry() const { return geometry_; }
  bool has_explicit_layouts() const { return geometry_.has_value(); }

  void set(ValueId v, Owner owner, std::optional<ThreadLayout> layout = std::nullopt);
  void set_geometry(LayoutGeometry g) { geometry_ = g; }

 private:
  std::vector<Owner> owners_;                         // indexed by ValueId
  std::vector<std::optional<ThreadLayout>> layouts_;  // indexed by ValueId
  std::optional<LayoutGeometry> geometry_;
};

}  // namespace metile::ir
