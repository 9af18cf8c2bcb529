// Which values of a Tile IR kernel are affine in their tile's coordinates, and by how much one
// step along each dimension moves them: what reading an operand straight from device memory
// (device_dot_operands.cc) and copying it along its contiguous axis (async_operand_copy.cc)
// need to know about its address and mask.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::lower {

// Per dimension, what one step along it adds to a value; nullopt: a runtime (uniform) amount.
using Coefficients = std::vector<std::optional<int64_t>>;

bool all_zero(const Coefficients& c);
bool all_known(const Coefficients& c);

// Affine values: uniform scalars, arange, splat, expand_dims, broadcast, add, sub, mul by a
// uniform factor and ptr_add (of a pointer that is itself affine).
class Affine {
 public:
  Affine(const std::map<ir::ValueId, const ir::Op*>& definers, const ir::Kernel& k)
      : k_(k), definers_(definers) {}

  const ir::Op* definer(ir::ValueId v) const {
    const auto it = definers_.find(v);
    return it == definers_.end() ? nullptr : it->second;
  }
  // The integer a constant (or a splat of one) holds.
  std::optional<int64_t> constant(ir::ValueId v) const;
  // v's steps along its tile's dimensions (empty for a scalar); nullopt unless v is affine.
  std::optional<Coefficients> of(ir::ValueId v) const;
  // The conjuncts of an i1 tile (and of ands); false when one is neither a (broadcast)
  // comparison of affine values with constant steps nor uniform.
  bool conjuncts(ir::ValueId mask, std::vector<ir::ValueId>& atoms) const;
  // The comparison an atom broadcasts (through broadcast and expand_dims); none for a
  // uniform atom.
  const ir::Op* comparison(ir::ValueId atom) const;
  // The steps of x - y over the atom's coordinates for an atom comparing x and y (all
  // constant), zero for a uniform atom; nullopt for anything else.
  std::optional<Coefficients> difference(ir::ValueId atom) const;
  // The dimension along which the pointer tile p steps by exactly one element (the last such
  // one), or nullopt.
  std::optional<int> unit_stride_axis(ir::ValueId p) const;

 private:
  std::optional<Coefficients> widened(ir::ValueId v, size_t rank) const;
  static Coefficients scaled(Coefficients c, std::optional<int64_t> factor);

  const ir::Kernel& k_;
  const std::map<ir::ValueId, const ir::Op*>& definers_;
};

}  // namespace metile::lower
