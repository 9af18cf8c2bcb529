// Schedule(staging="device") for the SIMD-group GEMM (docs/gemm.md, "Staging"): each operand
// fragment of a dot is read straight from device memory, with no threadgroup copy of the
// operand tiles and no threadgroup barrier for them. The operand must be a load whose address
// is affine in the tile's coordinates, one element apart along its rows or its columns, with
// a mask that is a conjunction of comparisons of affine values (what expand_tensor_access
// makes of a descriptor load). A SIMD group's block of an operand whose mask holds at the
// block's worst corners is complete: one matrix_load per fragment. Any other block (the
// ragged M, N and K tails) moves fragment by fragment through the SIMD group's 64 elements of
// tail scratch, each lane loading its elements with masked scalar loads (masked elements are
// the load's `other`, never read), as device tiles do (lower_fragment_tile.cc).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "metile/ir/ir.h"
#include "metile/lower/lowering_context.h"

namespace metile::lower {

// Why operand `operand` (0: a, 1: b) of a dot of 2-D tiles cannot be read straight from
// device memory into fragments; empty when it can.
std::string device_operand_unfit(const ir::Kernel& tile, const ir::Op& dot, int operand);

// The threadgroup bytes of the dots' tail scratch under staging='device' on the simdgroup
// backend, a region of its own laid out before lowering (0 otherwise).
int64_t device_operand_tail_bytes(const ir::Kernel& tile, const schedule::SchedulePlan& plan,
                                  int64_t simdgroups);

// The Tile IR ops that only compute device-staged dot operands (their loads and the address,
// mask and fill tiles no other op reads): lowering skips them, since the operand fragments
// recompute what they need from the definitions (rematerialise.h). Empty unless the plan has
// staging='device' on the simdgroup backend.
std::set<const ir::Op*> device_operand_only_ops(const ir::Kernel& tile,
                                                const schedule::SchedulePlan& plan);

// The operand fragments of one dot, read from device memory.
class DeviceDotOperands {
 public:
  // NotSupported naming the operand that cannot be read so (device_operand_unfit, or a scalar
  // of its address that is not uniform).
  DeviceDotOperands(Lowering& l, const ir::Op& dot);

  // The fragments of operand `operand` at tile coordinates (row + 8i, column + 8j) for
  // i < rows, j < columns, in row-major order; row and column uniform in the SIMD group.
  std::vector<ir::ValueId> fragments(int operand, ir::ValueId row, ir::ValueId column, int64_t rows,
                                     int64_t columns);

 private:
  struct Operand {
    ir::ValueId pointer = ir::kNoValue;  // the Tile IR pointer tile of the load
    ir::ValueId other = ir::kNoValue;    // its fill value (none: zero)
    std::vector<ir::ValueId> atoms;      // the mask's conjuncts (none: no mask)
    bool transpose = false;              // one element apart along columns, not rows
    ir::ValueId stride = ir::kNoValue;   // Metal IR: the elements between rows (columns)
    ir::DType dtype = ir::DType::f32;
  };

  ir::ValueId complete(const Operand& o, ir::ValueId row, ir::ValueId column, int64_t rows,
                       int64_t columns);
  ir::ValueId direct(const Operand& o, ir::ValueId row, ir::ValueId column);
  ir::ValueId through_tail(const Operand& o, ir::ValueId row, ir::ValueId column);
  ir::ValueId coefficient(ir::ValueId v, size_t dim);
  ir::ValueId tail_scratch(ir::DType dtype);

  Lowering& l_;
  const ir::Op& dot_;
  const std::map<ir::ValueId, const ir::Op*>& definers_;  // the lowering's
  std::vector<Operand> operands_;
  ir::ValueId tail_ = ir::kNoValue;  // this SIMD group's 64 elements of tail scratch
};

}  // namespace metile::lower
