// Symbolic index arithmetic of Metal IR, for the grouped vector accesses
// (group_vector_accesses.h) and their late verifier (verify_vector_accesses.h). An integer
// value is read as a sum of opaque SSA terms with constant coefficients plus a constant,
// modulo 2^bits of its dtype (floordiv and rem by a power of two of a bounded non-negative
// value are terms of their own, docs/lowering.md "The proof"): two indices whose difference has no
// terms left differ by the same constant in every thread, whatever the terms hold. The relation is
// modular: a 32-bit index that wraps also satisfies it, so a caller that needs the exact difference
// checks the widened indices at run time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::lower {

// A device pointer as base + index elements: ptr_add(base, index).
struct PointerParts {
  ir::ValueId base = ir::kNoValue;
  ir::ValueId index = ir::kNoValue;
};

class AffineReader;

class IndexAnalysis {
 public:
  // Records the op that defines each value of k (values made later are opaque terms).
  explicit IndexAnalysis(const ir::Kernel& k);
  ~IndexAnalysis();

  // b - a when it is one constant for every thread (a and b integers of one dtype, the
  // difference taken modulo 2^bits); nullopt when it depends on a term.
  std::optional<int64_t> constant_difference(ir::ValueId a, ir::ValueId b) const;
  // p as ptr_add(base, index); nullopt when p is not made by a ptr_add.
  std::optional<PointerParts> pointer_parts(ir::ValueId p) const;
  // The op that defines v, or nullptr (parameters, region arguments, values made later).
  const ir::Op* definer(ir::ValueId v) const;

 private:
  const ir::Kernel& kernel_;
  std::vector<const ir::Op*> definers_;
  // The readings of every value asked about, kept across queries: a grouping pass compares
  // each access with every class of its run.
  std::unique_ptr<AffineReader> reader_;
};

}  // namespace metile::lower
