// Pointer arithmetic, loads and stores slot by slot; a slot of a thread that owns no element
// (a tile smaller than the threadgroup) is masked off.
#include "metile/lower/lowering_steps.h"

namespace metile::lower {

namespace {

ir::ValueId zero(Lowering& l, ir::DType dtype) {
  return ir::is_float(dtype) ? l.const_float(0.0, dtype) : l.const_int(0, dtype);
}

// The slot's mask: the user's (if any) and, for idle threads, ownership of an element.
ir::ValueId slot_mask(Lowering& l, ir::ValueId user_mask, ir::ValueId owns) {
  if (owns == ir::kNoValue) return user_mask;
  if (user_mask == ir::kNoValue) return owns;
  return l.emit(ir::OpKind::And, {user_mask, owns}, ir::Type::scalar(ir::DType::i1));
}

bool all_uniform(const Lowering& l, const std::vector<ir::ValueId>& values) {
  for (ir::ValueId v : values)
    if (!l.get(v).uniform) return false;
  return true;
}

// Whether a scalar store or atomic is the program's own (Triton's scalar semantics): every
// thread runs it together with the same operands, so one thread does it for all. Otherwise a
// read-modify-write of one address would repeat per thread, and an atomic count per thread.
bool once_per_program(const Lowering& l, const ir::Op& op) {
  return l.divergence == 0 && all_uniform(l, op.operands);
}

ir::ValueId is_leader(Lowering& l) {
  return l.emit(ir::OpKind::Cmp, {l.thread_index(), l.const_int(0)},
                ir::Type::scalar(ir::DType::i1), {{"pred", std::string("eq")}});
}

}  // namespace

void lower_ptr_add(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.results[0]);
  const LoweredValue &p = l.get(op.operands[0]), &i = l.get(op.operands[1]);
  if (!t.is_tile()) {
    l.bind(
        op.results[0],
        {{l.emit(ir::OpKind::PtrAdd, {p.slots[0], i.slots[0]}, t)}, false, p.uniform && i.uniform});
    return;
  }
  LoweredValue result;
  result.layout = l.operand_layout(op);
  for (int64_t r = 0; r < l.slot_count(t); ++r)
    result.slots.push_back(l.emit(ir::OpKind::PtrAdd, {p.slots[r], i.slots[r]}, t.element()));
  l.bind(op.results[0], std::move(result));
}

void lower_load(Lowering& l, const ir::Op& op) {
  if (lower_vectorized_operand_load(l, op)) return;
  const ir::Type& t = l.tile_type(op.results[0]);
  const bool masked = op.operands.size() == 3;
  const ir::Attrs hint = op.only_attr("eviction");
  if (!t.is_tile()) {
    std::vector<ir::ValueId> operands;
    for (ir::ValueId v : op.operands) operands.push_back(l.scalar(v));
    l.bind(op.results[0],
           {{l.emit(ir::OpKind::Load, operands, t, hint)}, false, all_uniform(l, op.operands)});
    return;
  }
  const ir::ValueId owns = l.has_idle_threads(t) ? l.owns_element(t.num_elements()) : ir::kNoValue;
  LoweredValue result;
  result.layout = l.operand_layout(op);
  for (int64_t r = 0; r < l.slot_count(t); ++r) {
    std::vector<ir::ValueId> operands = {l.get(op.operands[0]).slots[r]};
    const ir::ValueId mask =
        slot_mask(l, masked ? l.get(op.operands[1]).slots[r] : ir::kNoValue, owns);
    if (mask != ir::kNoValue) {
      operands.push_back(mask);
      operands.push_back(masked ? l.get(op.operands[2]).slots[r] : zero(l, t.dtype));
    }
    result.slots.push_back(l.emit(ir::OpKind::Load, operands, t.element(), hint));
  }
  l.bind(op.results[0], std::move(result));
}

void lower_store(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.operands[0]);
  const bool masked = op.operands.size() == 3;
  const ir::Attrs hint = op.only_attr("eviction");
  if (!t.is_tile()) {
    std::vector<ir::ValueId> operands;
    for (ir::ValueId v : op.operands) operands.push_back(l.scalar(v));
    if (once_per_program(l, op)) {
      const ir::ValueId leader = is_leader(l);
      if (masked)
        operands[2] = slot_mask(l, operands[2], leader);
      else
        operands.push_back(leader);
    }
    l.emit_void(ir::OpKind::Store, operands, hint);
    return;
  }
  // One writer per element: replicas of a replicated layout write nothing.
  const ir::ValueId owns = l.writes_elements(l.layout_of(op.operands[1]));
  for (int64_t r = 0; r < l.slot_count(t); ++r) {
    std::vector<ir::ValueId> operands = {l.get(op.operands[0]).slots[r],
                                         l.get(op.operands[1]).slots[r]};
    const ir::ValueId mask =
        slot_mask(l, masked ? l.get(op.operands[2]).slots[r] : ir::kNoValue, owns);
    if (mask != ir::kNoValue) operands.push_back(mask);
    l.emit_void(ir::OpKind::Store, operands, hint);
  }
}

void lower_atomic(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.results[0]);
  const bool masked = op.kind == ir::OpKind::AtomicRmw && op.operands.size() == 3;
  const size_t values = op.kind == ir::OpKind::AtomicCas ? 2 : 1;
  if (!t.is_tile()) {
    std::vector<ir::ValueId> operands;
    for (ir::ValueId v : op.operands) operands.push_back(l.scalar(v));
    if (!once_per_program(l, op)) {
      l.bind(op.results[0], {{l.emit(op.kind, operands, t, op.attrs)}, false, false});
      return;
    }
    // Thread 0 updates the address once and hands the old value to every thread through
    // threadgroup scratch, as Triton's scalar atomics do. A barrier first: every thread's
    // earlier accesses come before the update (the layer-norm tutorial's threads read a
    // counter that thread 0 then exchanges).
    l.emit_void(ir::OpKind::Barrier, {},
                {{"scope", std::string("threadgroup")}, {"mem", std::string("all")}});
    const ir::ValueId leader = is_leader(l);
    l.builder.begin_if(leader);
    const ir::ValueId updated = l.emit(op.kind, operands, t, op.attrs);
    l.builder.begin_else({updated});
    const ir::ValueId old = l.builder.end_if({zero(l, t.dtype)})[0];
    const ir::ValueId slot = l.scratch("a scalar atomic's old value", "exchange", t.dtype, 1);
    l.emit_void(ir::OpKind::Store, {slot, old, leader});
    l.threadgroup_barrier();
    const ir::ValueId shared = l.emit(ir::OpKind::Load, {slot}, t);
    l.threadgroup_barrier();
    l.bind(op.results[0], {{shared}, false, true});
    return;
  }
  const ir::ValueId owns = l.writes_elements(t);
  LoweredValue result;
  result.layout = l.operand_layout(op);
  for (int64_t r = 0; r < l.slot_count(t); ++r) {
    std::vector<ir::ValueId> operands;
    for (size_t i = 0; i <= values; ++i) operands.push_back(l.get(op.operands[i]).slots[r]);
    const ir::ValueId mask =
        slot_mask(l, masked ? l.get(op.operands[2]).slots[r] : ir::kNoValue, owns);
    const ir::OpKind kind = op.kind;
    if (mask != ir::kNoValue && kind == ir::OpKind::AtomicCas) {
      // A thread that owns no element compares with its own old value: nothing changes.
      l.builder.begin_if(mask);
      const ir::ValueId old = l.emit(kind, operands, t.element(), op.attrs);
      l.builder.begin_else({old});
      const ir::ValueId none = zero(l, t.dtype);
      result.slots.push_back(l.builder.end_if({none})[0]);
      continue;
    }
    if (mask != ir::kNoValue) operands.push_back(mask);
    result.slots.push_back(l.emit(kind, operands, t.element(), op.attrs));
  }
  l.bind(op.results[0], std::move(result));
}

void lower_shared_alloc(Lowering& l, const ir::Op& op) {
  const ir::Type& t = l.tile_type(op.results[0]);
  const int64_t size = op.int_attr("size");
  const int64_t offset =
      l.allocator.allocate_user("shared_alloc " + l.name(op.results[0]), t.dtype, size);
  l.bind(op.results[0],
         {{l.emit(ir::OpKind::ThreadgroupBuffer, {}, t, {{"offset", offset}, {"size", size}})},
          false,
          true});
}

void lower_barrier(Lowering& l, const ir::Op& op) {
  l.emit_void(ir::OpKind::Barrier, {}, op.attrs);
}

}  // namespace metile::lower
