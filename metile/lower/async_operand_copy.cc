// A software pipeline's copy of a dot operand tile straight from device memory into its slot:
// one async_copy per element, at the element's row and column of the slot, reading what the
// load would read (zeros where its mask is false). In the run layout of mma.sync's operands
// (dot_operand_vectors.h) each thread's elements come in runs of consecutive columns whose
// addresses are recomputed per element, so group_vector_accesses can pack a run into one copy
// of up to 16 bytes; elsewhere each slot's lowered pointer and mask are copied as they are.
#include <cmath>

#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"

namespace metile::lower {

namespace {

const ir::Type kI32 = ir::Type::scalar(ir::DType::i32);

// Whether v is a constant zero, or a splat or broadcast of one.
bool is_zero(const Lowering& l, ir::ValueId v) {
  const auto it = l.definers.find(v);
  if (it == l.definers.end()) return false;
  const ir::Op& def = *it->second;
  if (def.kind == ir::OpKind::Splat || def.kind == ir::OpKind::Broadcast)
    return is_zero(l, def.operands[0]);
  if (def.kind != ir::OpKind::Constant) return false;
  const ir::Attr& value = def.attrs.at("value");
  if (const int64_t* i = std::get_if<int64_t>(&value)) return *i == 0;
  const double* f = std::get_if<double>(&value);
  return f && *f == 0.0 && !std::signbit(*f);
}

// The slot address of element (row, column).
ir::ValueId slot_address(Lowering& l, ir::ValueId slot, ir::ValueId row, ir::ValueId column,
                         int64_t row_stride) {
  const ir::ValueId start = l.emit(ir::OpKind::Mul, {row, l.const_int(row_stride)}, kI32);
  const ir::ValueId at = l.emit(ir::OpKind::Add, {start, column}, kI32);
  return l.emit(ir::OpKind::PtrAdd, {slot, at}, l.metal.type(slot));
}

void copy(Lowering& l, ir::ValueId dst, ir::ValueId src, ir::ValueId mask) {
  std::vector<ir::ValueId> operands = {dst, src};
  if (mask != ir::kNoValue) operands.push_back(mask);
  l.emit_void(ir::OpKind::AsyncCopy, operands, {{"elements", int64_t{1}}});
}

}  // namespace

bool async_copyable(const Lowering& l, const ir::Op& load) {
  if (load.kind != ir::OpKind::Load) return false;
  const ir::Type& t = l.tile_type(load.results[0]);
  return t.is_tile() && t.shape.size() == 2 && is_power_of_two(t.shape[1]) &&
         !l.has_idle_threads(t) && (load.operands.size() == 1 || is_zero(l, load.operands[2]));
}

void copy_operand_async(Lowering& l, const ir::Op& load, ir::ValueId slot, int64_t row_stride) {
  const bool masked = load.operands.size() == 3;
  const bool runs = for_each_run_element(
      l, load, [&](ir::ValueId row, ir::ValueId column, std::vector<ir::ValueId> operands) {
        copy(l, slot_address(l, slot, row, column, row_stride), operands[0],
             masked ? operands[1] : ir::kNoValue);
      });
  if (runs) return;
  const ir::Type& t = l.tile_type(load.results[0]);
  const ir::ThreadLayout layout = l.layout_of(load.operands[0]);
  const int column_bits = log2_exact(t.shape[1]);
  for (int64_t r = 0; r < l.slot_count(t); ++r) {
    const ir::ValueId index = l.logical_index(layout, r);
    const ir::ValueId row = l.emit(ir::OpKind::Shr, {index, l.const_int(column_bits)}, kI32);
    const ir::ValueId column =
        l.emit(ir::OpKind::And, {index, l.const_int(t.shape[1] - 1)}, kI32);
    copy(l, slot_address(l, slot, row, column, row_stride), l.get(load.operands[0]).slots[r],
         masked ? l.get(load.operands[1]).slots[r] : ir::kNoValue);
  }
}

}  // namespace metile::lower
