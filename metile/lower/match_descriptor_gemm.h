// The canonical descriptor GEMM (metile_kernels.gemm's K loop, docs/gemm.md) in a traced Tile
// IR kernel before expand_tensor_access, matched once for every backend that lowers it whole
// (form_descriptor_matmul for Metal 4 tensor ops, match_async_gemm for sm90's wgmma_tma; the
// two-stage pipeline's canonical loop check reads the same K recurrence):
//
//   acc = for k in [0, inner) step BK, carrying zeros((BM, BN), f32):
//           yield dot(A.load((row[:, None], (k + arange(BK))[None, :])),
//                     B.load(((k + arange(BK))[:, None], column[None, :])), acc)
//   C.store((row[:, None], column[None, :]), value of acc)
//
// at the kernel's top level, with row = row0 + arange(BM), column = column0 + arange(BN), and
// A [rows, inner], B [inner, columns] and C [rows, columns] row-major rank-2 descriptors
// (unit inner stride). What lies between acc and the store (the epilogue), the operand types
// and the origins of the tile are each caller's own rules.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::lower {

// Definitions, use counts, parameters and printed names of a kernel's values, which the
// matchers and their messages read.
class KernelValues {
 public:
  explicit KernelValues(const ir::Kernel& k);

  const ir::Kernel& kernel() const { return k_; }
  // The op defining `v` (nullptr for block arguments and parameters).
  const ir::Op* def(ir::ValueId v) const;
  int uses(ir::ValueId v) const;
  bool is_param(ir::ValueId v) const { return params_.count(v) != 0; }
  const std::string& name(ir::ValueId v) const { return names_[v]; }
  // "'%5 = for' at line 3" for a message; empty for nullptr.
  std::string describe(const ir::Op* op) const;
  std::optional<int64_t> constant_int(ir::ValueId v) const;

 private:
  const ir::Kernel& k_;
  std::vector<std::string> names_;
  std::map<ir::ValueId, const ir::Op*> definer_;
  std::map<ir::ValueId, int> uses_;
  std::set<ir::ValueId> params_;
};

// Why a kernel is not the canonical descriptor GEMM: the op that does not fit (nullptr: the
// kernel as a whole) and the rule it breaks, worded for a message after describe(op).
struct GemmMismatch {
  const ir::Op* op = nullptr;
  std::string why;
};

// A rank-2 make_tensor's operands (base, rows, columns, row stride; the column stride is 1).
struct DescriptorView {
  ir::ValueId base = ir::kNoValue, rows = ir::kNoValue, columns = ir::kNoValue,
              row_stride = ir::kNoValue;
};

struct DescriptorGemm {
  size_t loop = 0, store = 0;  // indices in the kernel's top-level block
  const ir::Op* dot = nullptr;
  DescriptorView a, b, c;
  // The scalars of row0 + arange(BM) and column0 + arange(BN); kNoValue: a bare arange (0).
  ir::ValueId row0 = ir::kNoValue, column0 = ir::kNoValue;
  ir::ValueId accumulator = ir::kNoValue;  // the loop's result
  ir::ValueId stored = ir::kNoValue;       // the store's value, computed from the accumulator
};

// A K loop's matrix recurrence: how many values the loop carries, and its dot when it carries
// only an accumulator that it yields as acc = dot(a, b, acc), which nothing else reads.
struct KRecurrence {
  int carried = 0;
  const ir::Op* dot = nullptr;  // nullptr: not that recurrence
};
KRecurrence k_recurrence(const KernelValues& values, const ir::Op& loop);

// The kernel's canonical descriptor GEMM, or the first rule it breaks.
std::variant<DescriptorGemm, GemmMismatch> match_descriptor_gemm(const KernelValues& values);

}  // namespace metile::lower
