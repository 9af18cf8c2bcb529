// The wgmma_tma kernel (docs/hopper.md). Threads 0 .. 128C-1 are C consumer warp groups, each
// owning 64 rows of the BM x BN output tile; the last warp group is the producer. Shared
// memory holds an S-stage ring of A [BM x BK] and B [BK x BN] tiles (TMA's 128-byte-swizzled
// layout, B in 64-column blocks) and two mbarriers per stage: full (one arrival, the producer's
// expect-tx, completed by the copies' bytes) and empty (one arrival per consumer warp group).
//
//   thread 0: mbarrier_init every barrier; mbarrier_fence        then a threadgroup barrier
//   producer: setmaxnreg.dec; one thread, for each tile t of this worker, for each K step i
//             (counted across tiles): wait empty[i % S] for parity ((i / S) & 1) ^ 1 (a fresh
//             barrier's previous phase counts as complete), expect the stage's bytes on
//             full[i % S], tma_load A and B into the stage
//   consumer: setmaxnreg.inc; for each tile: wait full[i % S] for parity (i / S) & 1,
//             wgmma_fence, BK/16 wgmma_mma, commit, wait until one group is pending, then
//             release the previous stage (its wgmma finished) with one arrival on empty; after
//             the last step wait for every group and release the last stage; then the kernel's
//             own Tile IR (the K loop replaced by the accumulator registers, program_id by the
//             tile's coordinates) computes and stores the epilogue from the registers.
// Tiles are visited persistently (worker w of W takes tiles w, w + W, ...) in grouped order:
// GROUP_M row tiles share each column band, so the B tiles stay in L2. Broadcasts of row and
// column indices are recomputed in the accumulator's layout rather than exchanged, since the
// consumer warp groups may not meet the producer at a threadgroup barrier.
#include "metile/lower/lower_dot_wgmma.h"

#include <array>
#include <map>

#include "metile/lower/lowering_steps.h"
#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::lower {

namespace {

using K = ir::OpKind;
constexpr int64_t kWarpGroup = 128;
constexpr int64_t kSwizzleColumns = 64;  // 128-byte swizzle rows of 16-bit elements
constexpr int64_t kWgmmaK = 16;
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

// wgmma's m64nNk16 f32 accumulator (PTX ISA, "Register Fragments"), for C warp groups stacked
// over rows: thread t (warp w = t / 32 % 4, lane l, group g = t / 128) register i holds row
// 64g + 16w + l / 4 + 8 ((i / 2) % 2), column 8 (i / 4) + 2 (l % 4) + i % 2. As a bit
// permutation of the logical index row * BN + column (physical: thread bits, then register
// bits):
ir::ThreadLayout accumulator_layout(int64_t block_m, int64_t block_n) {
  const int threads = log2_exact(block_m / 64 * kWarpGroup);
  const int column_bits = log2_exact(block_n);
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
  for (int b = 7; b < threads; ++b) order.push_back(b);  // row bit 6: the warp group
  return ir::ThreadLayout(order, 0, block_n / 2);
}

class WgmmaKernel {
 public:
  explicit WgmmaKernel(Lowering& l)
      : l_(l),
        g_(*l.schedule_plan.async_gemm),
        stage_elements_(g_.block_m * g_.block_k + g_.block_k * g_.block_n) {
    ir::walk(l.tile.body, [&](const ir::Op& op) {
      for (ir::ValueId r : op.results) def_[r] = &op;
    });
  }

  void lower() {
    allocate();
    initialise_barriers();
    const ir::ValueId group = shr(l_.thread_index(), log2_exact(kWarpGroup));
    l_.builder.begin_if(cmp("eq", group, c(g_.consumers)));
    producer();
    l_.builder.begin_else({});
    consumers(group);
    l_.builder.end_if({});
    record();
  }

 private:
  // ---- shared memory -------------------------------------------------------------------
  void allocate() {
    const int64_t ring_offset = l_.allocator.allocate_user(
        "wgmma_tma ring (" + std::to_string(g_.stages) + " stages of A [" +
            std::to_string(g_.block_m) + " x " + std::to_string(g_.block_k) + "] and B [" +
            std::to_string(g_.block_k) + " x " + std::to_string(g_.block_n) + "])",
        g_.dtype, g_.stages * stage_elements_);
    const int64_t barrier_offset = l_.allocator.allocate_user(
        "wgmma_tma mbarriers (full and empty per stage)", ir::DType::i64, 2 * g_.stages);
    ring_ =
        l_.emit(K::ThreadgroupBuffer, {}, ir::Type::ptr(g_.dtype, ir::AddressSpace::Threadgroup),
                {{"offset", ring_offset}, {"size", g_.stages * stage_elements_}});
    barriers_ = l_.emit(K::ThreadgroupBuffer, {},
                        ir::Type::ptr(ir::DType::i64, ir::AddressSpace::Threadgroup),
                        {{"offset", barrier_offset}, {"size", int64_t{2} * g_.stages}});
  }

  ir::ValueId full(ir::ValueId stage) { return at(barriers_, stage); }
  ir::ValueId empty(ir::ValueId stage) { return at(barriers_, add(stage, c(g_.stages))); }

  void initialise_barriers() {
    l_.builder.begin_if(cmp("eq", l_.thread_index(), c(0)));
    for (int64_t s = 0; s < g_.stages; ++s) {
      l_.emit_void(K::MbarrierInit, {full(c(s))}, {{"count", int64_t{1}}});
      l_.emit_void(K::MbarrierInit, {empty(c(s))}, {{"count", int64_t{g_.consumers}}});
    }
    l_.emit_void(K::MbarrierFence, {});
    l_.builder.begin_else({});
    l_.builder.end_if({});
    l_.threadgroup_barrier();
  }

  // ---- the tile schedule ---------------------------------------------------------------
  struct Tile {
    ir::ValueId m, n;
  };

  ir::ValueId tiles_along(const schedule::Extent& e, int64_t block) {
    return div(add(extent(e), c(block - 1)), c(block));
  }

  // Tile t of the grouped order: GROUP_M row tiles per column band.
  Tile grouped(ir::ValueId t, ir::ValueId tiles_m, ir::ValueId tiles_n) {
    const ir::ValueId band = mul(c(g_.group_m), tiles_n);
    const ir::ValueId first_m = mul(div(t, band), c(g_.group_m));
    const ir::ValueId height = l_.emit(K::Min, {sub(tiles_m, first_m), c(g_.group_m)}, i32());
    const ir::ValueId within = rem(t, band);
    return {add(first_m, rem(within, height)), div(within, height)};
  }

  // for t in [worker, tiles, workers) carrying the ring's step count; `body` gets the tile and
  // the count at its first K step, and returns the count after its last.
  template <typename Body>
  void for_each_tile(Body body) {
    const ir::ValueId tiles_m = tiles_along(g_.rows, g_.block_m);
    const ir::ValueId tiles_n = tiles_along(g_.columns, g_.block_n);
    const ir::ValueId worker = l_.emit(K::ThreadgroupIndex, {}, i32(), {{"axis", int64_t{0}}});
    const ir::ValueId workers = l_.emit(K::ThreadgroupCount, {}, i32(), {{"axis", int64_t{0}}});
    ir::Builder::ForScope scope =
        l_.builder.begin_for(worker, mul(tiles_m, tiles_n), workers, {c(0)});
    const ir::ValueId next = body(grouped(scope.induction_var, tiles_m, tiles_n), scope.carried[0]);
    l_.builder.end_for({next});
  }

  ir::ValueId k_steps() { return tiles_along(g_.inner, g_.block_k); }

  // ---- the producer --------------------------------------------------------------------
  void producer() {
    l_.emit_void(K::SetMaxNReg, {},
                 {{"registers", int64_t{kProducerRegisters}}, {"action", std::string("dec")}});
    l_.builder.begin_if(cmp("eq", l_.thread_index(), c(g_.consumers * kWarpGroup)));
    const int64_t stage_bytes = stage_elements_ * ir::dtype_bytes(g_.dtype);
    for_each_tile([&](Tile tile, ir::ValueId first) {
      const ir::ValueId steps = k_steps();
      ir::Builder::ForScope k = l_.builder.begin_for(c(0), steps, c(1), {});
      const ir::ValueId i = add(first, k.induction_var);
      const ir::ValueId stage = rem(i, c(g_.stages));
      const ir::ValueId parity = l_.emit(K::Xor, {phase(i), c(1)}, i32());
      l_.emit_void(K::MbarrierWait, {empty(stage), parity});
      l_.emit_void(K::MbarrierArriveExpectTx, {full(stage)}, {{"bytes", stage_bytes}});
      const ir::ValueId a = at(ring_, mul(stage, c(stage_elements_)));
      const ir::ValueId k0 = mul(k.induction_var, c(g_.block_k));
      l_.emit_void(K::TmaLoad, {a, full(stage), k0, mul(tile.m, c(g_.block_m))},
                   {{"map", int64_t{0}}});
      const ir::ValueId n0 = mul(tile.n, c(g_.block_n));
      for (int64_t j = 0; j < g_.block_n / kSwizzleColumns; ++j)
        l_.emit_void(K::TmaLoad,
                     {at(a, c(g_.block_m * g_.block_k + j * kSwizzleColumns * g_.block_k)),
                      full(stage), add(n0, c(j * kSwizzleColumns)), k0},
                     {{"map", int64_t{1}}});
      l_.builder.end_for({});
      return add(first, steps);
    });
    l_.builder.begin_else({});
    l_.builder.end_if({});
  }

  // ---- the consumers -------------------------------------------------------------------
  void consumers(ir::ValueId group) {
    l_.emit_void(K::SetMaxNReg, {},
                 {{"registers", int64_t{kConsumerRegisters}}, {"action", std::string("inc")}});
    const ir::ValueId leader =
        cmp("eq", l_.emit(K::And, {l_.thread_index(), c(kWarpGroup - 1)}, i32()), c(0));
    for_each_tile([&](Tile tile, ir::ValueId first) {
      tile_ = tile;
      first_ = first;
      group_ = group;
      leader_ = leader;
      l_.intercept = [this](const ir::Op& op) { return intercept(op); };
      ++l_.nesting;
      lower_block(l_, l_.tile.body);
      --l_.nesting;
      l_.intercept = nullptr;
      return add(first, k_steps());
    });
  }

  bool intercept(const ir::Op& op) {
    if (op.kind == K::ProgramId) {
      const int64_t axis = op.int_attr("axis");
      if (axis > 1)
        l_.not_supported(op, "program_id(2) in a wgmma_tma kernel, whose tiles are 2-D");
      l_.bind(op.results[0], {{axis == 0 ? tile_.m : tile_.n}, false, true});
      return true;
    }
    if (op.kind == K::For && holds_dot(op)) {
      mainloop(op);
      return true;
    }
    if (op.kind == K::Broadcast) {
      recompute_broadcast(op);
      return true;
    }
    if (op.kind == K::Store) return store_output(op);
    return false;
  }

  static bool holds_dot(const ir::Op& loop) {
    bool found = false;
    ir::walk(loop.regions[0], [&](const ir::Op& op) { found = found || op.kind == K::Dot; });
    return found;
  }

  void mainloop(const ir::Op& loop) {
    const int64_t registers = g_.block_n / 2;
    std::vector<ir::ValueId> zero(static_cast<size_t>(registers),
                                  l_.const_float(0.0, ir::DType::f32));
    const ir::ValueId steps = k_steps();
    ir::Builder::ForScope k = l_.builder.begin_for(c(0), steps, c(1), zero);
    const ir::ValueId i = add(first_, k.induction_var);
    const ir::ValueId stage = rem(i, c(g_.stages));
    l_.emit_void(K::MbarrierWait, {full(stage), phase(i)});
    l_.emit_void(K::WgmmaFence, {});
    const ir::ValueId stage_base = at(ring_, mul(stage, c(stage_elements_)));
    const ir::ValueId a = at(stage_base, mul(group_, c(64 * g_.block_k)));
    const ir::ValueId b = at(stage_base, c(g_.block_m * g_.block_k));
    std::vector<ir::ValueId> acc = k.carried;
    for (int64_t kk = 0; kk < g_.block_k / kWgmmaK; ++kk) {
      std::vector<ir::ValueId> operands = {at(a, c(kk * kWgmmaK)),
                                           at(b, c(kk * kWgmmaK * kSwizzleColumns))};
      operands.insert(operands.end(), acc.begin(), acc.end());
      acc =
          emit_multi(K::WgmmaMma, operands, registers,
                     {{"n", g_.block_n},
                      {"b_block_bytes", kSwizzleColumns * g_.block_k * ir::dtype_bytes(g_.dtype)}});
    }
    l_.emit_void(K::WgmmaCommit, {});
    l_.emit_void(K::WgmmaWait, {}, {{"pending", int64_t{1}}});
    // The previous step's wgmma have finished reading its stage: release it.
    release(l_.emit(K::And, {leader_, cmp("gt", k.induction_var, c(0))}, i1()),
            rem(add(i, c(g_.stages - 1)), c(g_.stages)));
    const std::vector<ir::ValueId> finished = l_.builder.end_for(acc);
    // The accumulators pass through the last wait, so the epilogue reads them after it.
    const std::vector<ir::ValueId> result =
        l_.builder.create(K::WgmmaWait, finished, std::vector<ir::Type>(finished.size(), f32()),
                          {{"pending", int64_t{0}}});
    release(l_.emit(K::And, {leader_, cmp("gt", steps, c(0))}, i1()),
            rem(add(first_, add(steps, c(g_.stages - 1))), c(g_.stages)));
    LoweredValue value(result, true, false);
    value.layout = accumulator_layout(g_.block_m, g_.block_n);
    l_.bind(loop.results[0], std::move(value));
  }

  void release(ir::ValueId when, ir::ValueId stage) {
    l_.builder.begin_if(when);
    l_.emit_void(K::MbarrierArrive, {empty(stage)});
    l_.builder.begin_else({});
    l_.builder.end_if({});
  }

  // ---- broadcasts in the accumulator's layout ----------------------------------------
  void recompute_broadcast(const ir::Op& op) {
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
    // column plus the slot's: computed once, and adjacent columns visibly one apart, so their
    // stores group into pairs.
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
  bool store_output(const ir::Op& op) {
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
    const std::map<std::pair<int64_t, int64_t>, size_t> pairs =
        register_pairs(layout, values.size());
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
  std::map<std::pair<int64_t, int64_t>, size_t> register_pairs(const ir::ThreadLayout& layout,
                                                               size_t registers) const {
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
  std::array<ir::ValueId, 4> swap_pairs(ir::ValueId odd, const std::vector<ir::ValueId>& values,
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

  ir::ValueId parameter(int index) {
    return l_.scalar(l_.tile.params[static_cast<size_t>(index)].value);
  }
  ir::ValueId extent(const schedule::Extent& e) {
    return e.param >= 0 ? parameter(e.param) : c(e.value);
  }

  // The element at `coords` of an index tile built from aranges, splats of scalars, integer
  // arithmetic, expand_dims and broadcast (match_async_gemm admits no other row or column
  // index).
  ir::ValueId evaluate(ir::ValueId v, const std::vector<ir::ValueId>& coords) {
    const ir::Op* op = def_.at(v);
    const ir::Type& t = l_.tile_type(v);
    if (op->kind == K::Arange) return add(coords[0], c(op->int_attr("start")));
    if (op->kind == K::Splat) return l_.scalar(op->operands[0]);
    if (op->kind == K::Add || op->kind == K::Sub || op->kind == K::Mul)
      return l_.emit(op->kind,
                     {evaluate(op->operands[0], coords), evaluate(op->operands[1], coords)},
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

  // ---- reports -------------------------------------------------------------------------
  void record() {
    l_.buffering.push_back({"the K loop (wgmma_tma ring)", "wgmma_tma ring", g_.stages,
                            g_.stages * stage_elements_ * ir::dtype_bytes(g_.dtype)});
    ir::Attrs& a = l_.metal.attrs;
    a["tensor_maps"] = int64_t{2};
    // An extent is a parameter index, or -1 - value for a constant (never below -1 - 2^31).
    const auto code = [](const schedule::Extent& e) {
      return e.param >= 0 ? int64_t{e.param} : -1 - e.value;
    };
    const auto map = [&](int index, int buffer, const schedule::Extent& outer,
                         const schedule::Extent& inner, int64_t box_outer, int64_t box_inner) {
      const std::string at = "tensor_map" + std::to_string(index) + "_";
      a[at + "buffer"] = int64_t{buffer};
      a[at + "outer"] = code(outer);
      a[at + "inner"] = code(inner);
      a[at + "box_outer"] = box_outer;
      a[at + "box_inner"] = box_inner;
    };
    map(0, g_.left, g_.rows, g_.inner, g_.block_m, g_.block_k);
    map(1, g_.right, g_.inner, g_.columns, g_.block_k, kSwizzleColumns);
    a["persistent_rows"] = code(g_.rows);
    a["persistent_columns"] = code(g_.columns);
    a["persistent_block_m"] = g_.block_m;
    a["persistent_block_n"] = g_.block_n;
  }

  // ---- Metal IR helpers ----------------------------------------------------------------
  std::vector<ir::ValueId> emit_multi(K kind, std::vector<ir::ValueId> operands, int64_t results,
                                      ir::Attrs attrs) {
    return l_.builder.create(kind, std::move(operands),
                             std::vector<ir::Type>(static_cast<size_t>(results), f32()),
                             std::move(attrs));
  }
  ir::ValueId phase(ir::ValueId i) { return l_.emit(K::And, {div(i, c(g_.stages)), c(1)}, i32()); }
  ir::ValueId at(ir::ValueId p, ir::ValueId i) {
    return l_.emit(K::PtrAdd, {p, i}, l_.metal.type(p));
  }
  ir::ValueId c(int64_t v) { return l_.const_int(v); }
  ir::ValueId add(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Add, {a, b}, i32()); }
  ir::ValueId sub(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Sub, {a, b}, i32()); }
  ir::ValueId mul(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Mul, {a, b}, i32()); }
  ir::ValueId div(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Div, {a, b}, i32()); }
  ir::ValueId rem(ir::ValueId a, ir::ValueId b) { return l_.emit(K::Rem, {a, b}, i32()); }
  ir::ValueId shr(ir::ValueId a, int bits) { return l_.emit(K::Shr, {a, c(bits)}, i32()); }
  ir::ValueId cmp(const char* pred, ir::ValueId a, ir::ValueId b) {
    return l_.emit(K::Cmp, {a, b}, i1(), {{"pred", std::string(pred)}});
  }
  static ir::Type i32() { return ir::Type::scalar(ir::DType::i32); }
  static ir::Type i1() { return ir::Type::scalar(ir::DType::i1); }
  static ir::Type f32() { return ir::Type::scalar(ir::DType::f32); }

  Lowering& l_;
  const schedule::AsyncGemm& g_;
  const int64_t stage_elements_;
  std::map<ir::ValueId, const ir::Op*> def_;
  ir::ValueId ring_ = ir::kNoValue, barriers_ = ir::kNoValue;
  Tile tile_{ir::kNoValue, ir::kNoValue};
  ir::ValueId first_ = ir::kNoValue, group_ = ir::kNoValue, leader_ = ir::kNoValue;
};

}  // namespace

ThreadPlan wgmma_thread_plan(const schedule::AsyncGemm& gemm) {
  ThreadPlan plan(static_cast<int>(gemm.consumers * kWarpGroup),
                  "wgmma_tma: " + std::to_string(gemm.consumers) +
                      " consumer warp groups of 128 threads, 64 rows of the tile each");
  plan.layouts = {accumulator_layout(gemm.block_m, gemm.block_n)};
  plan.ownership = "wgmma_tma: the accumulator tile in wgmma's register fragments";
  return plan;
}

int64_t wgmma_block_threads(const schedule::AsyncGemm& gemm) {
  return (gemm.consumers + 1) * kWarpGroup;
}

void lower_wgmma_kernel(Lowering& l) {
  WgmmaKernel(l).lower();
}

}  // namespace metile::lower
