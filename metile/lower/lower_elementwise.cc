// Ops that keep ownership: each register slot is computed from the same slots of the
// operands, so no value moves between threads.
#include "metile/lower/lowering_steps.h"

namespace metile::lower {

void lower_uniform_scalar(Lowering& l, const ir::Op& op, ir::OpKind metal_kind) {
  const ir::Type& t = l.tile_type(op.results[0]);
  l.bind(op.results[0], {{l.emit(metal_kind, {}, t, op.attrs)}, false, true});
}

void lower_thread_id(Lowering& l, const ir::Op& op) {
  l.bind(op.results[0], {{l.thread_index()}, false, false});
}

void lower_arange(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.results[0]);
  const int64_t start = op.int_attr("start");
  const ir::ThreadLayout layout = l.layout(t);
  const ir::ValueId part = l.thread_part(layout);
  LoweredValue result;
  for (int64_t r = 0; r < l.slot_count(t); ++r) {
    const int64_t offset = start + Lowering::slot_offset(layout, r);
    result.slots.push_back(offset == 0 ? part
                                       : l.emit(ir::OpKind::Add, {part, l.const_int(offset)},
                                                ir::Type::scalar(ir::DType::i32)));
  }
  result.layout = layout;
  l.bind(op.results[0], std::move(result));
}

void lower_splat(Lowering& l, const ir::Op& op) {
  const ir::ValueId s = l.uniform_scalar(op, op.operands[0], "the splatted scalar");
  const ir::Type& t = l.tile_type(op.results[0]);
  l.bind(op.results[0], {std::vector<ir::ValueId>(l.slot_count(t), s), true, true});
}

void lower_elementwise(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.results[0]);
  if (!t.is_tile()) {
    std::vector<ir::ValueId> operands;
    bool uniform = true;
    for (ir::ValueId v : op.operands) {
      operands.push_back(l.scalar(v));
      uniform = uniform && l.get(v).uniform;
    }
    l.bind(op.results[0], {{l.emit(op.kind, operands, t, op.attrs)}, false, uniform});
    return;
  }
  // Splats combine into a splat: one op serves every slot.
  bool splats = true;
  for (ir::ValueId v : op.operands) splats = splats && l.get(v).uniform;
  LoweredValue result;
  result.uniform = splats;
  result.layout = l.operand_layout(op);
  for (int64_t r = 0; r < l.slot_count(t); ++r) {
    if (splats && r > 0) {
      result.slots.push_back(result.slots[0]);
      continue;
    }
    std::vector<ir::ValueId> operands;
    for (ir::ValueId v : op.operands) {
      const LoweredValue& lv = l.get(v);
      operands.push_back(lv.tile ? lv.slots[r] : l.uniform_scalar(op, v, "the scalar operand"));
    }
    result.slots.push_back(l.emit(op.kind, operands, t.element(), op.attrs));
  }
  l.bind(op.results[0], std::move(result));
}

void lower_simd_collective(Lowering& l, const ir::Op& op) {
  std::vector<ir::ValueId> operands;
  for (ir::ValueId v : op.operands) operands.push_back(l.scalar(v));
  const ir::Type& t = l.tile_type(op.results[0]);
  // The result is shared by one SIMD group at most, never by the whole threadgroup.
  l.bind(op.results[0], {{l.emit(op.kind, operands, t, op.attrs)}, false, false});
}

}  // namespace metile::lower
