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
  const ir::ThreadLayout* given = op.layout_attr("layout");
  const ir::ThreadLayout layout = given ? *given : l.layout(t);
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

namespace {

// Integer division, remainder and shifts trap on the host for a zero divisor or an over-wide
// shift amount (host_compiler.cc), and are undefined on every target.
bool divides_or_shifts(const ir::Op& op, ir::DType element) {
  using K = ir::OpKind;
  const bool kind = op.kind == K::Div || op.kind == K::Rem || op.kind == K::FloorDiv ||
                    op.kind == K::Shl || op.kind == K::Shr;
  return kind && ir::is_integer(element);
}

}  // namespace

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
  // A thread that owns no element of the tile still computes its slot, from loads that
  // gave `other` (0): it divides by 1 and shifts by 0 instead, so that only an element of
  // the tile can fault.
  const bool guard = divides_or_shifts(op, t.element().dtype) && !splats && l.has_idle_threads(t) &&
                     !l.get(op.operands[1]).uniform;
  const ir::ValueId owns = guard ? l.owns_element(t.num_elements()) : ir::kNoValue;
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
    if (guard) {
      const bool shift = op.kind == ir::OpKind::Shl || op.kind == ir::OpKind::Shr;
      const ir::DType dtype = t.element().dtype;
      operands[1] = l.emit(ir::OpKind::Select,
                           {owns, operands[1], l.const_int(shift ? 0 : 1, dtype)}, t.element());
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
