// wgmma_staged's prefetch ring, as Triton pipelines attention's K/V loop: in a for loop with
// uniform bounds whose body's wgmma_staged dots read b from tile loads that the induction
// variable and values from before the loop decide (staged_operand), each such b gets two slots
// of pinned 128-byte-swizzled scratch. Step 0's tiles are copied before the loop; each step's
// first such dot waits for the step's copies, fences them, publishes them with one barrier and
// starts copying the next step's tiles into the other slots, so that they land while this
// step computes. The dots read their slots with no barrier of their own: the next write into a
// slot follows the next step's barrier, which every warp group reaches after its wgmma waits.
//
//   if start < end: copy the tiles at start into slots 0; commit
//   for i, slot = start, 0 ...:
//     first ring dot: wait 0; fence; barrier
//                     if i + step < end: copy the tiles at i + step into slots 1 - slot
//                     commit; wgmma from slot 'slot'; wait
//     later ring dots: wgmma from slot 'slot'; wait
//     slot = 1 - slot
//   wait 0; barrier (the slots are free)
//
// A copy lowers the body ops its loads' operands come from (the slice) again with the
// induction variable at the step it copies, and restores the body's own bindings after.
#include "metile/lower/staged_prefetch.h"

#include <set>

#include "metile/lower/lowering_steps.h"
#include "metile/lower/rematerialise.h"

namespace metile::lower {

namespace {

const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);
const ir::Type kI1 = ir::Type::scalar(ir::DType::i1);

// The body ops that compute `values` there, in program order; none when one of them reads a
// carried value or is not a pure op (a load, a region, a barrier).
std::optional<std::vector<const ir::Op*>> slice_of(const ir::Block& body,
                                                   const std::vector<ir::ValueId>& values) {
  const std::set<ir::ValueId> carried(body.args.begin() + 1, body.args.end());
  const std::vector<const ir::Op*> slice = block_slice(body, values);
  for (const ir::Op* op : slice) {
    const ir::OpInfo& info = ir::op_info(op->kind);
    if (!op->regions.empty() || info.has(ir::Trait::ReadsMemory) ||
        info.has(ir::Trait::WritesMemory) || info.has(ir::Trait::Convergent))
      return std::nullopt;
    for (ir::ValueId v : op->operands)
      if (carried.count(v)) return std::nullopt;
  }
  return slice;
}

// The slice lowered with the induction variable at step k.
void lower_slice_at(Lowering& l, const StagedRing& ring, ir::ValueId k) {
  l.bind(ring.loop->regions[0].args[0], LoweredValue({k}, false, true));
  ir::Block slice;
  for (const ir::Op* op : ring.slice) slice.ops.push_back(*op);
  lower_block(l, slice);
}

ir::ValueId less(Lowering& l, ir::ValueId a, ir::ValueId b) {
  return l.emit(ir::OpKind::Cmp, {a, b}, kI1, {{"pred", "lt"}});
}

void end_guard(Lowering& l) {
  l.builder.begin_else({});
  l.builder.end_if({});
}

// The slot `slot` (i32) of an operand's two.
ir::ValueId slot_buffer(Lowering& l, const StagedRing::Operand& o, ir::ValueId slot) {
  const ir::ValueId offset = l.emit(ir::OpKind::Mul, {slot, l.const_int(o.slot_elements)}, kI32);
  return l.emit(ir::OpKind::PtrAdd, {o.buffer, offset}, l.metal.type(o.buffer));
}

// The ring's tiles at step k copied into slot `slot`, the slice lowered again at k; the
// bindings it changes are restored.
void copy_step(Lowering& l, const StagedRing& ring, ir::ValueId k, ir::ValueId slot) {
  const ir::ValueId induction = ring.loop->regions[0].args[0];
  std::vector<std::pair<ir::ValueId, LoweredValue>> saved;
  const auto save = [&](ir::ValueId v) {
    if (l.is_bound(v)) saved.emplace_back(v, l.get(v));
  };
  save(induction);
  for (const ir::Op* op : ring.slice)
    for (ir::ValueId r : op->results) save(r);
  lower_slice_at(l, ring, k);
  for (const StagedRing::Operand& o : ring.operands)
    copy_staged_operand(l, *o.dot, slot_buffer(l, o, slot));
  for (auto& [v, lowered] : saved) l.restore(v, std::move(lowered));
}

}  // namespace

std::optional<StagedRing> start_staged_ring(Lowering& l, const ir::Op& loop, ir::ValueId start,
                                            ir::ValueId end) {
  if (l.schedule_plan.strategy != schedule::MatrixStrategy::WgmmaStaged) return std::nullopt;
  const ir::Block& body = loop.regions[0];
  StagedRing ring;
  ring.loop = &loop;
  std::vector<const ir::Op*> dots;
  std::vector<ir::ValueId> sources;
  const std::map<const ir::Op*, const ir::Op*> candidates = staged_operand_candidates(l);
  for (const ir::Op& op : body.ops) {
    if (op.kind != ir::OpKind::Dot) continue;
    const auto load = l.definers.find(op.operands[1]);
    if (load == l.definers.end() || !candidates.count(load->second)) continue;
    const bool in_body = std::any_of(body.ops.begin(), body.ops.end(),
                                     [&](const ir::Op& o) { return &o == load->second; });
    if (!in_body) continue;
    dots.push_back(&op);
    sources.insert(sources.end(), load->second->operands.begin(), load->second->operands.end());
  }
  if (dots.empty()) return std::nullopt;
  const std::optional<std::vector<const ir::Op*>> slice = slice_of(body, sources);
  if (!slice) return std::nullopt;
  ring.slice = *slice;
  // Lowered at the first step, the slice tells which loads its dots may copy.
  lower_slice_at(l, ring, start);
  for (const ir::Op* dot : dots) {
    const StagedOperand b = staged_operand(l, *dot);
    if (!b.load) continue;
    const ir::Type& t = l.tile_type(dot->operands[1]);
    StagedRing::Operand o;
    o.dot = dot;
    o.load = b.load;
    o.k_major = b.k_major;
    o.slot_elements = t.num_elements();
    const std::string purpose = "prefetch ring b (" + l.name(dot->results[0]) + ", 2 slots)";
    const int64_t offset = l.allocator.pin_scratch(purpose, t.dtype, 2 * o.slot_elements, 1024);
    o.buffer = l.emit(ir::OpKind::ThreadgroupBuffer, {},
                      ir::Type::ptr(t.dtype, ir::AddressSpace::Threadgroup),
                      {{"offset", offset},
                       {"size", 2 * o.slot_elements},
                       {"scratch", std::string("prefetch")},
                       {"slots", int64_t{2}}});
    ring.operands.push_back(o);
  }
  if (ring.operands.empty()) return std::nullopt;
  l.builder.begin_if(less(l, start, end));
  for (const StagedRing::Operand& o : ring.operands)
    copy_staged_operand(l, *o.dot, slot_buffer(l, o, l.const_int(0)));
  end_guard(l);
  l.emit_void(ir::OpKind::AsyncCopyCommit, {});
  return ring;
}

const StagedRing::Operand* StagedRing::find(const ir::Op& dot) const {
  for (const Operand& o : operands)
    if (o.dot == &dot) return &o;
  return nullptr;
}

ir::ValueId ring_slot(Lowering& l, StagedRing& ring, const StagedRing::Operand& o) {
  if (!ring.published) {
    ring.published = true;
    l.emit_void(ir::OpKind::AsyncCopyWait, {}, {{"pending", int64_t{0}}});
    l.emit_void(ir::OpKind::AsyncProxyFence, {});
    l.threadgroup_barrier();
    const ir::ValueId next = l.emit(ir::OpKind::Add, {ring.induction, ring.step}, kI32);
    l.builder.begin_if(less(l, next, ring.end));
    copy_step(l, ring, next, l.emit(ir::OpKind::Xor, {ring.slot, l.const_int(1)}, kI32));
    end_guard(l);
    l.emit_void(ir::OpKind::AsyncCopyCommit, {});
  }
  return slot_buffer(l, o, ring.slot);
}

void finish_staged_ring(Lowering& l) {
  l.emit_void(ir::OpKind::AsyncCopyWait, {}, {{"pending", int64_t{0}}});
  l.threadgroup_barrier();
  if (l.nesting == 0) l.allocator.unpin_scratch();
}

}  // namespace metile::lower
