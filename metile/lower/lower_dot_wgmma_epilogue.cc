// The wgmma_tma kernel's epilogue (docs/hopper.md): after the K loop the kernel's own Tile IR
// runs on the accumulator's registers. Broadcast row and column indices are recomputed in the
// accumulator's layout rather than exchanged, since the consumer warp groups may not meet the
// producer at a threadgroup barrier; the output tile is stored by this file.
#include "metile/lower/lower_dot_wgmma.h"
#include "metile/lower/lower_dot_wgmma_emit.h"
#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::lower {

// wgmma's m64nNk16 f32 accumulator (PTX ISA, "Register Fragments"), for C warp groups stacked
// over rows: thread t (warp w = t / 32 % 4, lane l, group g = t / 128) register i of m64 block
// j holds row (block_m / C) g + 64 j + 16w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) +
// 2 (l % 4) + i % 2. As a bit permutation of the logical index row * BN + column (physical:
// thread bits, then register bits):
ir::ThreadLayout wgmma_accumulator_layout(int64_t block_m, int64_t block_n, int64_t groups) {
  using wgmma::kWarpGroup;
  const int threads = log2_exact(groups * kWarpGroup);
  const int column_bits = log2_exact(block_n);
  const int blocks = log2_exact(block_m / groups / 64);  // m64 blocks per warp group
  auto reg = [&](int bit) { return threads + bit; };
  std::vector<int> order;
  order.push_back(reg(0));  // column bit 0
  order.push_back(0);       // column bits 1, 2: lane bits 0, 1
  order.push_back(1);
  for (int b = 3; b < column_bits; ++b) order.push_back(reg(b - 1));  // column 8s: i / 4
  order.push_back(2);  // row bits 0..2: lane bits 2..4
  order.push_back(3);
  order.push_back(4);
  order.push_back(reg(1));  // row bit 3: (i / 2) % 2
  order.push_back(5);       // row bits 4, 5: the warp in its group
  order.push_back(6);
  // Row bits from 6: the m64 block of the group (registers past the block's n/2), then the
  // warp group.
  for (int b = 0; b < blocks; ++b) order.push_back(reg(column_bits - 1 + b));
  for (int b = 7; b < threads; ++b) order.push_back(b);
  return ir::ThreadLayout(order, 0, block_m * block_n / (groups * kWarpGroup));
}

namespace wgmma {

ir::ThreadLayout accumulator_layout(int64_t block_m, int64_t block_n) {
  return wgmma_accumulator_layout(block_m, block_n, block_m / 64);
}

Epilogue::Epilogue(Lowering& l, const schedule::AsyncGemm& g) : Emitter(l, g) {
  ir::walk(l.tile.body, [&](const ir::Op& op) {
    for (ir::ValueId r : op.results) def_[r] = &op;
  });
}

bool Epilogue::lower(const ir::Op& op, Tile tile) {
  tile_ = tile;
  if (op.kind == K::Broadcast) {
    recompute_broadcast(op);
    return true;
  }
  return op.kind == K::Store && store_output(op);
}

void Epilogue::recompute_broadcast(const ir::Op& op) {
  const ir::Type& type = l_.tile_type(op.results[0]);
  if (l_.get(op.operands[0]).uniform) {
    const ir::ValueId s = l_.get(op.operands[0]).slots[0];
    l_.bind(op.results[0], {std::vector<ir::ValueId>(l_.slot_count(type), s), true, true});
    return;
  }
  const ir::ThreadLayout layout = l_.layout(type);
  LoweredValue value;
  value.layout = layout;
  // A 2-D index is the thread's part plus the slot's constant on disjoint bits (the
  // accumulator's layout has no xor mask), so its row and column are the thread's row and
  // column plus the slot's: the thread's part computed once.
  if (type.shape.size() == 1) {
    for (int64_t r = 0; r < l_.slot_count(type); ++r)
      value.slots.push_back(evaluate(op.results[0], {l_.logical_index(layout, r)}));
  } else {
    METILE_ASSERT(layout.xor_mask() == 0, "wgmma_tma: a 2-D epilogue layout with an xor mask");
    const int bits = log2_exact(type.shape[1]);
    const int64_t columns = type.shape[1];
    const ir::ValueId part = l_.thread_part(layout);
    const ir::ValueId row = shr(part, bits);
    const ir::ValueId column = l_.emit(K::And, {part, c(columns - 1)}, i32());
    for (int64_t r = 0; r < l_.slot_count(type); ++r) {
      const int64_t offset = Lowering::slot_offset(layout, r);
      value.slots.push_back(
          evaluate(op.results[0],
                   {offset >> bits ? add(row, c(offset >> bits)) : row,
                    offset & (columns - 1) ? add(column, c(offset & (columns - 1))) : column}));
    }
  }
  l_.bind(op.results[0], std::move(value));
}

// ---- the output store ---------------------------------------------------------------
// The output tile's store (match_async_gemm admits one: C [rows, columns] at the tile's own
// rows and columns), from the registers in the accumulator's layout, where lane q of a quad
// holds columns 8j + 2q and 8j + 2q + 1 of its rows for every j: 4-byte pieces, half of each
// 32-byte sector, and one store instruction per pair drained too slowly (ncu at 4096^3: the
// consumers spent 18% of their time in the epilogue, stalled on registers the pending stores
// still held). So lanes q and q ^ 1 swap one pair of each two (j, j + 1): the even lane then
// holds columns 8j + 2q .. + 3, the odd one 8j + 2q + 6 .. + 9, and the quad a whole sector
// of each row in 8-byte pieces. The exchange moves the f32 values before the conversion to
// the output dtype. `columns` is a multiple of 8 (B's TMA map needs 16-byte rows, checked at
// launch), so four columns from a multiple of four are in bounds or out together: one mask
// per piece, the row's bound and the column's, each computed once per thread. The pieces'
// addresses are the row's start plus 64-bit column indices, which cannot wrap, so
// group_vector_accesses guards each piece's one vector store by that mask and the alignment
// alone.
bool Epilogue::store_output(const ir::Op& op) {
  const ir::ThreadLayout layout = accumulator_layout(g_.block_m, g_.block_n);
  const LoweredValue& stored = l_.get(op.operands[1]);
  if (stored.uniform || !(stored.layout == layout)) return false;  // the generic store
  // The values before the store's conversion, when it has one (the accumulator is f32).
  const ir::Op* cast = def_.count(op.operands[1]) ? def_.at(op.operands[1]) : nullptr;
  const bool converted =
      cast && cast->kind == K::Cast && l_.get(cast->operands[0]).layout == layout;
  const std::vector<ir::ValueId>& values =
      converted ? l_.get(cast->operands[0]).slots : stored.slots;
  // Shuffles move 32-bit values; others (a 16-bit or boolean epilogue) take the generic store,
  // and the report lists no exchange.
  if (ir::dtype_bytes(l_.metal.type(values[0]).dtype) != 4) return false;
  l_.layout_conversions.push_back(
      {"the output " + l_.name(op.operands[1]) +
           " (wgmma_tma's epilogue: lanes q and q ^ 1 swap register pairs, 4 columns a thread)",
       "simd_shuffle", "none"});
  const ir::Type element = l_.tile_type(op.operands[1]).element();
  const int bits = log2_exact(g_.block_n);
  const ir::ValueId part = l_.thread_part(layout);
  const ir::ValueId odd = cmp("ne", l_.emit(K::And, {l_.thread_index(), c(1)}, i32()), c(0));
  const ir::ValueId row0 = add(mul(tile_.m, c(g_.block_m)), shr(part, bits));
  // The first column of the thread's pieces: its pair's column, 6 further on odd lanes.
  const ir::ValueId column0 =
      add(add(mul(tile_.n, c(g_.block_n)), l_.emit(K::And, {part, c(g_.block_n - 1)}, i32())),
          l_.emit(K::Select, {odd, c(6), c(0)}, i32()));
  const ir::ValueId wide_column0 = l_.emit(K::Cast, {column0}, ir::Type::scalar(ir::DType::i64));
  const ir::ValueId rows = extent(g_.rows), columns = extent(g_.columns);
  const ir::ValueId base = parameter(g_.output);
  const ir::Type pointer = l_.metal.type(base);
  std::map<int64_t, ir::ValueId> row_start, row_inside;
  const std::map<std::pair<int64_t, int64_t>, size_t> pairs = register_pairs(layout, values.size());
  for (const auto& [at, first] : pairs) {
    const auto [row_offset, column_offset] = at;
    if (column_offset % 16 != 0) continue;  // the second pair of (j, j + 1)
    if (!row_start.count(row_offset)) {
      const ir::ValueId row = row_offset ? add(row0, c(row_offset)) : row0;
      row_start[row_offset] = l_.emit(K::PtrAdd, {base, mul(row, columns)}, pointer);
      row_inside[row_offset] = cmp("lt", row, rows);
    }
    const std::array<ir::ValueId, 4> piece =
        swap_pairs(odd, values, first, pairs.at({row_offset, column_offset + 8}));
    const ir::ValueId inside =
        l_.emit(K::And,
                {row_inside[row_offset],
                 cmp("lt", column_offset ? add(column0, c(column_offset)) : column0, columns)},
                i1());
    for (size_t e = 0; e < 4; ++e) {
      const ir::ValueId value = converted ? l_.emit(K::Cast, {piece[e]}, element) : piece[e];
      const ir::ValueId column = l_.emit(
          K::Add,
          {wide_column0, l_.const_int(column_offset + static_cast<int64_t>(e), ir::DType::i64)},
          ir::Type::scalar(ir::DType::i64));
      l_.emit_void(K::Store,
                   {l_.emit(K::PtrAdd, {row_start[row_offset], column}, pointer), value, inside});
    }
  }
  return true;
}

// The register of the first column of each pair of the accumulator's `registers`, by (row
// offset, column offset) from the thread's own row and column.
std::map<std::pair<int64_t, int64_t>, size_t> Epilogue::register_pairs(
    const ir::ThreadLayout& layout, size_t registers) const {
  const int bits = log2_exact(g_.block_n);
  std::map<std::pair<int64_t, int64_t>, size_t> at;
  for (size_t r = 0; r + 1 < registers; r += 2) {
    const int64_t offset = Lowering::slot_offset(layout, static_cast<int64_t>(r));
    METILE_ASSERT(Lowering::slot_offset(layout, static_cast<int64_t>(r) + 1) == offset + 1,
                  "wgmma_tma: a register pair that is not two adjacent columns");
    at[{offset >> bits, offset & (g_.block_n - 1)}] = r;
  }
  return at;
}

// Lanes q and q ^ 1 swap one pair of two: the even lane sends the pair at `second` and keeps
// the one at `first`, the odd lane the reverse; each ends with four adjacent columns.
std::array<ir::ValueId, 4> Epilogue::swap_pairs(ir::ValueId odd,
                                                const std::vector<ir::ValueId>& values,
                                                size_t first, size_t second) {
  std::array<ir::ValueId, 4> piece{};
  for (size_t e = 0; e < 2; ++e) {
    const ir::ValueId mine_first = values[first + e], mine_second = values[second + e];
    const ir::Type t = l_.metal.type(mine_first);
    const ir::ValueId sent = l_.emit(K::Select, {odd, mine_first, mine_second}, t);
    const ir::ValueId got = l_.emit(K::SimdShuffleXor, {sent, c(1)}, t);
    piece[e] = l_.emit(K::Select, {odd, got, mine_first}, t);
    piece[2 + e] = l_.emit(K::Select, {odd, mine_second, got}, t);
  }
  return piece;
}

// The element at `coords` of an index tile built from aranges, splats of scalars, integer
// arithmetic, expand_dims and broadcast (match_async_gemm admits no other row or column
// index).
ir::ValueId Epilogue::evaluate(ir::ValueId v, const std::vector<ir::ValueId>& coords) {
  const ir::Op* op = def_.at(v);
  const ir::Type& t = l_.tile_type(v);
  if (op->kind == K::Arange) return add(coords[0], c(op->int_attr("start")));
  if (op->kind == K::Splat) return l_.scalar(op->operands[0]);
  if (op->kind == K::Add || op->kind == K::Sub || op->kind == K::Mul)
    return l_.emit(op->kind, {evaluate(op->operands[0], coords), evaluate(op->operands[1], coords)},
                   ir::Type::scalar(t.dtype));
  if (op->kind == K::ExpandDims)
    return evaluate(op->operands[0], {coords[op->int_attr("axis") == 0 ? 1 : 0]});
  if (op->kind == K::Broadcast) {
    const ir::Type& source = l_.tile_type(op->operands[0]);
    std::vector<ir::ValueId> inner;
    for (size_t d = 0; d < source.shape.size(); ++d)
      inner.push_back(source.shape[d] == 1 ? c(0) : coords[d]);
    return evaluate(op->operands[0], inner);
  }
  l_.not_supported(*op,
                   "a wgmma_tma epilogue broadcasts only row and column indices built from "
                   "arange, program_id and scalars");
}

}  // namespace wgmma
}  // namespace metile::lower
