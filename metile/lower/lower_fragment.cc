// Matrix fragments in Tile IR (docs/fragments.md): a fragment is one Metal IR value of its
// SIMD group, so each fragment op lowers to the same Metal IR op, and a dot of fragments to
// matrix_mma. Pointers, offsets, strides and fill values must be the same in every thread,
// as the Metal IR ops require of every lane.
#include "metile/lower/lowering_steps.h"

namespace metile::lower {

// Fragments are the simdgroup_inline backend's: the kernel places one per SIMD group itself,
// which the schedule plan must have agreed to (geometry, staging, no whole-GEMM tiling).
void require_fragment_backend(const Lowering& l, const ir::Op& op) {
  if (l.schedule_plan.backend == schedule::Backend::SimdgroupInline) return;
  l.user_error(op,
               "matrix fragments (tensor(block_shape=(8, 8)) views and dot of fragments) need "
               "SCHEDULE=metile.Schedule(backend=\"simdgroup_inline\"), but the kernel's "
               "schedule plan has backend '" +
                   std::string(schedule::backend_name(l.schedule_plan.backend)) + "' (" +
                   l.schedule_plan.backend_reason + ")");
}

namespace {

ir::ValueId fragment_operand(Lowering& l, const ir::Op& op, ir::ValueId v) {
  if (l.tile_type(v).is_matrix()) return l.scalar(v);
  return l.uniform_scalar(op, v, "the fragment's pointer, offset, stride or fill value");
}
}  // namespace

void lower_fragment_op(Lowering& l, const ir::Op& op) {
  require_fragment_backend(l, op);
  std::vector<ir::ValueId> operands;
  for (ir::ValueId v : op.operands) operands.push_back(fragment_operand(l, op, v));
  if (op.results.empty()) return l.emit_void(op.kind, std::move(operands), op.attrs);
  const ir::Type& t = l.tile_type(op.results[0]);
  l.bind(op.results[0], {{l.emit(op.kind, std::move(operands), t, op.attrs)}, false, false});
}

void lower_fragment_dot(Lowering& l, const ir::Op& op) {
  require_fragment_backend(l, op);
  std::vector<ir::ValueId> operands;
  for (ir::ValueId v : op.operands) operands.push_back(fragment_operand(l, op, v));
  const ir::Type& t = l.tile_type(op.results[0]);
  l.bind(op.results[0],
         {{l.emit(ir::OpKind::MatrixMma, std::move(operands), t, op.attrs)}, false, false});
}

}  // namespace metile::lower
