// Structured control flow. A loop whose bounds are uniform may hold anything; one whose bounds
// differ between threads runs per thread and may hold only per-thread scalar code. Each carried
// tile becomes one carried scalar per register slot, except a dot accumulator the loop keeps in
// SIMD-group matrix fragments (fragment_carries, lower_dot_simdgroup.cc). An if with a uniform
// condition may hold anything; one whose condition differs between threads may hold only per-thread
// scalar code, because convergent ops (ops.def: barriers, reductions, SIMD collectives) and tile
// operations need every thread. A while is the same with its condition in place of the bounds:
// uniform, it may hold anything (the condition may read memory through a scalar atomic that one
// thread performs for the program, with barriers); differing between threads, only per-thread
// scalar code.
#include <algorithm>

#include "metile/lower/lowering_steps.h"
#include "metile/lower/staged_prefetch.h"

namespace metile::lower {

namespace {

std::vector<ir::ValueId> flatten(const Lowering& l, const std::vector<ir::ValueId>& values) {
  std::vector<ir::ValueId> flat;
  for (ir::ValueId v : values) {
    const LoweredValue& lv = l.get(v);
    flat.insert(flat.end(), lv.slots.begin(), lv.slots.end());
  }
  return flat;
}

// Binds Tile IR values (tiles and scalars) to consecutive runs of `flat`.
void bind_flat(Lowering& l, const std::vector<ir::ValueId>& tile_values,
               const std::vector<ir::ValueId>& flat) {
  size_t next = 0;
  for (ir::ValueId v : tile_values) {
    const ir::Type& t = l.tile_type(v);
    const size_t n = t.is_tile() ? static_cast<size_t>(l.slot_count(t)) : 1;
    LoweredValue lv;
    lv.slots.assign(flat.begin() + next, flat.begin() + next + n);
    lv.uniform = l.is_uniform(v);
    l.bind(v, std::move(lv));
    next += n;
  }
}

// bind_flat for a loop's region arguments or results, where `carries` says which carried
// values are dot accumulators kept in fragments: a region argument binds the fragments, a
// result leaves them for the registers of its default layout.
void bind_carried(Lowering& l, const std::vector<ir::ValueId>& tile_values,
                  const std::vector<ir::ValueId>& flat,
                  const std::vector<std::optional<FragmentCarry>>& carries, bool results) {
  size_t next = 0;
  for (size_t i = 0; i < tile_values.size(); ++i) {
    const ir::ValueId v = tile_values[i];
    const ir::Type& t = l.tile_type(v);
    if (!carries[i]) {
      const size_t n = t.is_tile() ? static_cast<size_t>(l.slot_count(t)) : 1;
      bind_flat(l, {v}, {flat.begin() + next, flat.begin() + next + n});
      next += n;
      continue;
    }
    const size_t n = static_cast<size_t>(fragment_count(l, *carries[i]));
    const std::vector<ir::ValueId> fragments(flat.begin() + next, flat.begin() + next + n);
    next += n;
    if (!results) {
      l.bind(v, carried_fragment_value(fragments));
      continue;
    }
    LoweredValue lv;
    lv.slots = carried_slots(l, *carries[i], fragments, t);
    l.bind(v, std::move(lv));
  }
}

const std::vector<ir::ValueId>& yields_of(const ir::Block& region) {
  static const std::vector<ir::ValueId> kNone;
  return region.ops.empty() ? kNone : region.ops.back().operands;
}

int64_t largest_tile(const Lowering& l, const ir::Op& loop) {
  int64_t largest = 0;
  auto consider = [&](ir::ValueId v) {
    if (l.tile_type(v).is_tile()) largest = std::max(largest, l.tile_type(v).num_elements());
  };
  for (ir::ValueId v : loop.regions[0].args) consider(v);
  ir::walk(loop.regions[0], [&](const ir::Op& op) {
    for (ir::ValueId v : op.operands) consider(v);
    for (ir::ValueId v : op.results) consider(v);
  });
  return largest;
}

// The first op in `region` that needs every thread of the threadgroup, or nullptr.
const ir::Op* first_collective(const Lowering& l, const ir::Block& region) {
  const ir::Op* found = nullptr;
  ir::walk(region, [&](const ir::Op& op) {
    if (found) return;
    // A matrix fragment belongs to its whole SIMD group, so its ops need every lane too.
    auto shared_by_threads = [&](ir::ValueId v) {
      return l.tile_type(v).is_tile() || l.tile_type(v).is_matrix();
    };
    bool needs_all = ir::op_info(op.kind).has(ir::Trait::Convergent);
    for (ir::ValueId v : op.operands) needs_all = needs_all || shared_by_threads(v);
    for (ir::ValueId v : op.results) needs_all = needs_all || shared_by_threads(v);
    if (needs_all) found = &op;
  });
  return found;
}

// A UserError naming `op` when its regions hold an op that needs every thread while `value`
// (the construct's `what`: its condition, a loop bound) differs between threads: the regions
// (`holder`: "loop body", "branches" when `plural`) may then hold only per-thread scalar code.
void refuse_collectives(const Lowering& l, const ir::Op& op, const std::string& what,
                        ir::ValueId value, const std::string& holder, bool plural = false) {
  for (const ir::Block& region : op.regions)
    if (const ir::Op* inner = first_collective(l, region))
      l.user_error(op, "the " + what + " " + l.name(value) +
                           " differs between threads (it derives from thread_id), so the " +
                           holder + " may hold only per-thread scalar code, but " +
                           (plural ? "they hold " : "it holds ") +
                           std::string(ir::op_name(inner->kind)) +
                           "; barriers, SIMD collectives, tile and fragment operations need "
                           "every thread");
}

// Whether every thread runs the loop's iterations together. Bounds that differ between threads
// (tile_range(thread_id(), n, step)) give each thread its own trip count: allowed for a loop of
// per-thread scalar code only, since a convergent op or tile op inside would need every thread.
bool uniform_bounds(const Lowering& l, const ir::Op& loop) {
  const char* roles[] = {"start", "end", "step"};
  for (int i = 0; i < 3; ++i) {
    const ir::ValueId bound = loop.operands[static_cast<size_t>(i)];
    if (l.get(bound).uniform) continue;
    refuse_collectives(l, loop, "loop " + std::string(roles[i]), bound, "loop body");
    return false;
  }
  return true;
}

}  // namespace

void lower_for(Lowering& l, const ir::Op& op) {
  // A K loop the plan requires double-buffered is a software pipeline of its own.
  if (const std::optional<FragmentCarry> carry = pipelined_carry(l, op))
    return lower_pipelined_for(l, op, *carry);
  const ir::Block& body = op.regions[0];
  const std::vector<ir::ValueId> inits(op.operands.begin() + 3, op.operands.end());
  const bool per_thread = !uniform_bounds(l, op);
  const ir::ValueId start = l.scalar(op.operands[0]);
  const ir::ValueId end = l.scalar(op.operands[1]);
  const ir::ValueId step = l.scalar(op.operands[2]);
  // Dot accumulators kept in fragments enter them before the loop.
  const std::vector<std::optional<FragmentCarry>> carries = fragment_carries(l, op);
  std::vector<ir::ValueId> init_flat;
  for (size_t i = 0; i < inits.size(); ++i) {
    const std::vector<ir::ValueId> values =
        carries[i] ? carried_fragments(l, *carries[i], inits[i]) : l.get(inits[i]).slots;
    init_flat.insert(init_flat.end(), values.begin(), values.end());
  }
  // wgmma_staged's b tiles of the next step are copied while this one computes; the loop
  // carries the slot they land in.
  std::optional<StagedRing> ring = per_thread ? std::nullopt : start_staged_ring(l, op, start, end);
  if (ring) init_flat.push_back(l.const_int(0));
  ir::Builder::ForScope scope = l.builder.begin_for(start, end, step, init_flat);
  std::vector<ir::ValueId> carried = scope.carried;
  StagedRing* const outer_ring = l.staged_ring;
  if (ring) {
    ring->induction = scope.induction_var;
    ring->step = step;
    ring->end = end;
    ring->slot = carried.back();
    carried.pop_back();
  }
  l.staged_ring = ring ? &*ring : nullptr;
  l.bind(body.args[0], {{scope.induction_var}, false, !per_thread});
  bind_carried(l, {body.args.begin() + 1, body.args.end()}, carried, carries, false);
  ++l.nesting;
  l.divergence += per_thread;
  lower_block(l, body);
  l.divergence -= per_thread;
  --l.nesting;
  std::vector<ir::ValueId> yields = flatten(l, yields_of(body));
  if (ring)
    yields.push_back(
        l.emit(ir::OpKind::Xor, {ring->slot, l.const_int(1)}, ir::Type::scalar(ir::DType::i32)));
  std::vector<ir::ValueId> results = l.builder.end_for(yields);
  l.staged_ring = outer_ring;
  if (ring) {
    results.pop_back();
    finish_staged_ring(l);
  }
  bind_carried(l, op.results, results, carries, true);

  if (const int64_t largest = largest_tile(l, op); largest > 0)
    l.loops.push_back(
        {"for " + l.name(body.args[0]) + (op.loc.known() ? " at " + op.loc.str() : ""), largest,
         static_cast<int>(std::max<int64_t>(1, largest / l.threads))});
}

void lower_if(Lowering& l, const ir::Op& op) {
  const bool per_thread = !l.is_uniform(op.operands[0]);
  if (per_thread) refuse_collectives(l, op, "condition", op.operands[0], "branches", true);
  l.builder.begin_if(l.scalar(op.operands[0]));
  ++l.nesting;
  l.divergence += per_thread;
  lower_block(l, op.regions[0]);
  l.builder.begin_else(flatten(l, yields_of(op.regions[0])));
  if (op.regions.size() > 1) lower_block(l, op.regions[1]);
  l.divergence -= per_thread;
  --l.nesting;
  const std::vector<ir::ValueId> results = l.builder.end_if(
      op.regions.size() > 1 ? flatten(l, yields_of(op.regions[1])) : std::vector<ir::ValueId>{});
  bind_flat(l, op.results, results);
}

void lower_while(Lowering& l, const ir::Op& op) {
  const ir::Block &before = op.regions[0], &after = op.regions[1];
  const std::vector<ir::ValueId>& passed = yields_of(before);
  const ir::ValueId cond = passed[0];
  const bool per_thread = !l.is_uniform(cond);
  if (per_thread) refuse_collectives(l, op, "loop condition", cond, "loop");
  const std::vector<ir::ValueId> inits(op.operands.begin(), op.operands.end());
  bind_flat(l, before.args, l.builder.begin_while(flatten(l, inits)));
  ++l.nesting;
  l.divergence += per_thread;
  lower_block(l, before);
  const std::vector<ir::ValueId> values(passed.begin() + 1, passed.end());
  bind_flat(l, after.args, l.builder.begin_while_body(l.scalar(cond), flatten(l, values)));
  lower_block(l, after);
  const std::vector<ir::ValueId> results = l.builder.end_while(flatten(l, yields_of(after)));
  l.divergence -= per_thread;
  --l.nesting;
  bind_flat(l, op.results, results);
}

}  // namespace metile::lower
