// A software pipeline's copy of a dot operand tile straight from device memory into its slot:
// one async_copy per element, at the element's row and column of the slot, reading what the
// load would read (zeros where its mask is false). In the run layout of mma.sync's operands
// (dot_operand_vectors.h) each thread's elements come in runs of consecutive columns whose
// addresses are recomputed per element, so group_vector_accesses can pack a run into one copy
// of up to 16 bytes; elsewhere each slot's lowered pointer and mask are copied as they are.
#include <set>

#include "metile/lower/affine_tile.h"
#include "metile/lower/group_vector_accesses.h"
#include "metile/lower/lowering_steps.h"
#include "metile/lower/rematerialise.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);

ir::ValueId emit(Lowering& l, ir::OpKind kind, ir::ValueId a, ir::ValueId b) {
  return l.emit(kind, {a, b}, kI32);
}
// With a constant second operand (ValueId is an integer too: a separate name keeps them apart).
ir::ValueId emit_c(Lowering& l, ir::OpKind kind, ir::ValueId a, int64_t b) {
  return emit(l, kind, a, l.const_int(b));
}

void copy(Lowering& l, ir::ValueId dst, ir::ValueId src, ir::ValueId mask) {
  std::vector<ir::ValueId> operands = {dst, src};
  if (mask != ir::kNoValue) operands.push_back(mask);
  l.emit_void(ir::OpKind::AsyncCopy, operands, {{"elements", int64_t{1}}});
}

}  // namespace

ir::ValueId SlotLayout::offset(Lowering& l, ir::ValueId row, ir::ValueId column) const {
  using K = ir::OpKind;
  if (!swizzled) return emit(l, K::Add, emit_c(l, K::Mul, row, row_stride), column);
  const ir::ValueId block = emit_c(l, K::Shr, column, 6);
  const ir::ValueId within = emit_c(l, K::And, column, 63);
  const ir::ValueId chunk =
      emit(l, K::Xor, emit_c(l, K::Shr, within, 3), emit_c(l, K::And, row, 7));
  const ir::ValueId row_start =
      emit(l, K::Add, emit_c(l, K::Mul, block, rows * 64), emit_c(l, K::Mul, row, 64));
  return emit(l, K::Add, row_start,
              emit(l, K::Or, emit_c(l, K::Shl, chunk, 3), emit_c(l, K::And, within, 7)));
}

int64_t SlotLayout::offset_of(int64_t row, int64_t column) const {
  if (!swizzled) return row * row_stride + column;
  const int64_t within = column & 63;
  return (column >> 6) * rows * 64 + row * 64 + ((((within >> 3) ^ (row & 7)) << 3) | (within & 7));
}

namespace {

// How far slot `slot`'s place lies from slot 0's, when that is the same in every thread: then a
// run's place is the first run's plus a constant, which the CUDA compiler folds into the
// copy's address (one address register per operand, not one per run).
std::optional<int64_t> constant_place_delta(const ir::ThreadLayout& layout, int64_t columns,
                                            const SlotLayout& place, int64_t slot) {
  std::optional<int64_t> delta;
  for (int64_t t = 0; t < layout.thread_count(); ++t) {
    const int64_t first = layout.logical_index(t, 0), here = layout.logical_index(t, slot);
    const int64_t d = place.offset_of(here / columns, here % columns) -
                      place.offset_of(first / columns, first % columns);
    if (delta && *delta != d) return std::nullopt;
    delta = d;
  }
  return delta;
}

}  // namespace

bool async_copyable(const Lowering& l, const ir::Op& load) {
  if (load.kind != ir::OpKind::Load) return false;
  const ir::Type& t = l.tile_type(load.results[0]);
  return t.is_tile() && t.shape.size() == 2 && is_power_of_two(t.shape[1]) &&
         !l.has_idle_threads(t) &&
         (load.operands.size() == 1 || ir::is_zero_fill(load.operands[2], [&](ir::ValueId v) {
            const auto it = l.definers.find(v);
            return it == l.definers.end() ? nullptr : it->second;
          }));
}

namespace {

// What one step along the last axis adds to the integer tile v: 0 for a value broadcast along
// it (whatever computes it, a remainder included), the sum or scaled step through add, sub and
// a multiplication by a constant; nullopt where it is not one constant step.
std::optional<int64_t> column_step(const Lowering& l, ir::ValueId v) {
  const ir::Type& t = l.tile_type(v);
  if (!t.is_tile() || t.shape.back() == 1) return 0;
  const auto it = l.definers.find(v);
  if (it == l.definers.end()) return std::nullopt;
  const ir::Op& op = *it->second;
  using K = ir::OpKind;
  const int64_t last = static_cast<int64_t>(t.shape.size()) - 1;
  switch (op.kind) {
    case K::Splat:
      return 0;
    case K::Arange:
      return t.shape.size() == 1 ? std::optional<int64_t>(1) : std::nullopt;
    case K::ExpandDims:
      return op.int_attr("axis") == last ? std::optional<int64_t>(0)
                                         : column_step(l, op.operands[0]);
    case K::Broadcast:
      return column_step(l, op.operands[0]);
    case K::Add:
    case K::Sub: {
      const std::optional<int64_t> a = column_step(l, op.operands[0]);
      const std::optional<int64_t> b = column_step(l, op.operands[1]);
      if (!a || !b) return std::nullopt;
      return op.kind == K::Add ? *a + *b : *a - *b;
    }
    case K::Mul: {
      const Affine affine(l.definers, l.tile);
      for (size_t i : {0, 1})
        if (const std::optional<int64_t> c = affine.constant(op.operands[1 - i]))
          if (const std::optional<int64_t> s = column_step(l, op.operands[i])) return *s * *c;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<HoistedPointers> hoist_copy_pointers(Lowering& l, const ir::Op& load,
                                                   const ir::Block& body) {
  std::set<ir::ValueId> inside;
  ir::walk(body, [&](const ir::Op& op) { inside.insert(op.results.begin(), op.results.end()); });
  const auto definer = [&](ir::ValueId v) -> const ir::Op* {
    const auto it = l.definers.find(v);
    return it == l.definers.end() ? nullptr : it->second;
  };
  const ir::Op* tile = definer(load.operands[0]);
  const ir::Op* splat =
      tile && tile->kind == ir::OpKind::PtrAdd ? definer(tile->operands[0]) : nullptr;
  const ir::Op* scalar =
      splat && splat->kind == ir::OpKind::Splat ? definer(splat->operands[0]) : nullptr;
  if (!scalar || scalar->kind != ir::OpKind::PtrAdd || inside.count(tile->operands[1]) ||
      inside.count(scalar->operands[0]) ||
      !Rematerialise(l, l.definers).possible(tile->operands[1]) ||
      column_step(l, tile->operands[1]) != 1)  // a run's elements: its first's + 0, 1, ...
    return std::nullopt;
  HoistedPointers hoisted{scalar->operands[1], {}};
  const ir::ValueId root = l.scalar(scalar->operands[0]);
  Rematerialise remat(l, l.definers);
  const bool runs = for_each_run(l, load, [&](ir::ValueId row, ir::ValueId column0, int64_t) {
    hoisted.runs.push_back(l.emit(ir::OpKind::PtrAdd,
                                  {root, remat.at(tile->operands[1], {row, column0})},
                                  l.metal.type(root)));
  });
  if (!runs) return std::nullopt;
  return hoisted;
}

void copy_operand_async(Lowering& l, const ir::Op& load, ir::ValueId slot, const SlotLayout& place,
                        const HoistedPointers* hoisted) {
  const bool masked = load.operands.size() == 3;
  const ir::Type ptr = l.metal.type(slot);
  const ir::Type& tile = l.tile_type(load.results[0]);
  const ir::ThreadLayout tile_layout = l.layout(tile);
  ir::ValueId first_run = ir::kNoValue;  // the first run's first element's offset
  int64_t element = 0;                   // the slot of the run's first element
  // The run's first element's offset in the slot.
  const auto run_place = [&](ir::ValueId row, ir::ValueId column0) {
    const std::optional<int64_t> delta =
        element == 0 ? std::nullopt
                     : constant_place_delta(tile_layout, tile.shape[1], place, element);
    const ir::ValueId at =
        delta ? emit_c(l, ir::OpKind::Add, first_run, *delta) : place.offset(l, row, column0);
    if (element == 0) first_run = at;
    return at;
  };
  Rematerialise remat(l, l.definers);
  if (hoisted && (!masked || remat.possible(load.operands[1]))) {
    const ir::ValueId step = l.scalar(hoisted->step_offset);
    size_t run_index = 0;
    const bool runs = for_each_run(l, load, [&](ir::ValueId row, ir::ValueId column0, int64_t run) {
      const ir::ValueId at = run_place(row, column0);
      const ir::ValueId first = hoisted->runs.at(run_index++);
      const ir::ValueId base = l.emit(ir::OpKind::PtrAdd, {first, step}, l.metal.type(first));
      for (int64_t d = 0; d < run; ++d) {
        const ir::ValueId column = d == 0 ? column0 : emit_c(l, ir::OpKind::Add, column0, d);
        copy(l,
             l.emit(ir::OpKind::PtrAdd, {slot, d == 0 ? at : emit_c(l, ir::OpKind::Add, at, d)},
                    ptr),
             l.emit(ir::OpKind::PtrAdd, {base, l.const_int(d)}, l.metal.type(first)),
             masked ? remat.at(load.operands[1], {row, column}) : ir::kNoValue);
      }
      element += run;
    });
    METILE_ASSERT(runs && run_index == hoisted->runs.size(),
                  "copy_operand_async: the hoisted pointers are not the load's runs");
    return;
  }
  ir::ValueId run_start = ir::kNoValue;  // the run's first element's offset
  const bool runs = for_each_run_element(
      l, load,
      [&](ir::ValueId row, ir::ValueId column0, int64_t d, std::vector<ir::ValueId> operands) {
        if (d == 0) run_start = run_place(row, column0);
        ++element;
        const ir::ValueId at = d == 0 ? run_start : emit_c(l, ir::OpKind::Add, run_start, d);
        copy(l, l.emit(ir::OpKind::PtrAdd, {slot, at}, ptr), operands[0],
             masked ? operands[1] : ir::kNoValue);
      });
  if (runs) return;
  const ir::ThreadLayout layout = l.layout_of(load.operands[0]);
  const int column_bits = log2_exact(tile.shape[1]);
  for (int64_t r = 0; r < l.slot_count(tile); ++r) {
    const ir::ValueId index = l.logical_index(layout, r);
    const ir::ValueId row = l.emit(ir::OpKind::Shr, {index, l.const_int(column_bits)}, kI32);
    const ir::ValueId column =
        l.emit(ir::OpKind::And, {index, l.const_int(tile.shape[1] - 1)}, kI32);
    copy(l, l.emit(ir::OpKind::PtrAdd, {slot, place.offset(l, row, column)}, ptr),
         l.get(load.operands[0]).slots[r],
         masked ? l.get(load.operands[1]).slots[r] : ir::kNoValue);
  }
}

StagedOperand staged_operand(Lowering& l, const ir::Op& dot) {
  const auto it = l.definers.find(dot.operands[1]);
  if (it == l.definers.end() || !async_copyable(l, *it->second)) return {};
  const ir::Op& load = *it->second;
  const Rematerialise remat(l, l.definers);
  for (ir::ValueId v : load.operands)
    if (!remat.possible(v)) return {};
  const std::optional<int> axis = Affine(l.definers, l.tile).unit_stride_axis(load.operands[0]);
  const ir::Type& t = l.tile_type(dot.operands[1]);
  const int64_t run = group_width(l.target, t.dtype);
  if (!axis || run == 0) return {};
  const int64_t line = t.shape[static_cast<size_t>(*axis)];
  // A K-major b fills 64-element rows of the swizzle; an N-major one 64-column blocks.
  if (line % 64 || t.shape[0] % 16 || t.num_elements() % (run * l.threads)) return {};
  return {&load, *axis == 0};
}

std::map<const ir::Op*, const ir::Op*> staged_operand_candidates(const Lowering& l) {
  std::map<const ir::Op*, const ir::Op*> candidates;
  if (l.schedule_plan.strategy != schedule::MatrixStrategy::WgmmaStaged) return candidates;
  std::map<ir::ValueId, int> uses;
  std::vector<const ir::Op*> dots;
  ir::walk(l.tile.body, [&](const ir::Op& op) {
    for (ir::ValueId v : op.operands) ++uses[v];
    if (op.kind == ir::OpKind::Dot) dots.push_back(&op);
  });
  for (const ir::Op* dot : dots) {
    const auto it = l.definers.find(dot->operands[1]);
    if (it != l.definers.end() && it->second->kind == ir::OpKind::Load &&
        uses[dot->operands[1]] == 1)
      candidates.emplace(it->second, dot);
  }
  return candidates;
}

bool defer_staged_operand_load(Lowering& l, const ir::Op& dot) {
  const StagedOperand b = staged_operand(l, dot);
  if (b.load) l.deferred_operand_loads.insert(b.load);
  return b.load != nullptr;
}

void copy_staged_operand(Lowering& l, const ir::Op& dot, ir::ValueId buffer) {
  const StagedOperand b = staged_operand(l, dot);
  METILE_ASSERT(b.load,
                "copy_staged_operand: " + l.name(dot.results[0]) + "'s b is no staged load");
  const ir::Type& t = l.tile_type(dot.operands[1]);
  const int64_t run = group_width(l.target, t.dtype);
  // The contiguous axis's lines, each runs of `run` elements; a K-major b is stored as its
  // transpose (N rows of K elements), an N-major one as it is.
  const int64_t line = t.shape[b.k_major ? 0 : 1];
  const SlotLayout place{t.num_elements() / line, line, 0, true};
  const int runs_bits = log2_exact(line / run);
  const ir::Type ptr = l.metal.type(buffer);
  Rematerialise remat(l, l.definers);
  for (int64_t i = 0; i < t.num_elements() / (run * l.threads); ++i) {
    // Consecutive threads take consecutive runs of a line: a warp reads whole lines.
    const ir::ValueId index = emit_c(l, ir::OpKind::Add, l.thread_index(), i * l.threads);
    const ir::ValueId which = emit_c(l, ir::OpKind::Shr, index, runs_bits);
    const ir::ValueId first = emit_c(
        l, ir::OpKind::Shl, emit_c(l, ir::OpKind::And, index, line / run - 1), log2_exact(run));
    const ir::ValueId start = place.offset(l, which, first);
    for (int64_t d = 0; d < run; ++d) {
      const ir::ValueId along = d == 0 ? first : emit_c(l, ir::OpKind::Add, first, d);
      const std::vector<ir::ValueId> coords = b.k_major ? std::vector<ir::ValueId>{along, which}
                                                        : std::vector<ir::ValueId>{which, along};
      const ir::ValueId at = d == 0 ? start : emit_c(l, ir::OpKind::Add, start, d);
      copy(l, l.emit(ir::OpKind::PtrAdd, {buffer, at}, ptr), remat.at(b.load->operands[0], coords),
           b.load->operands.size() > 1 ? remat.at(b.load->operands[1], coords) : ir::kNoValue);
    }
  }
}

}  // namespace metile::lower
