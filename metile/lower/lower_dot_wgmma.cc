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
//             tile's coordinates) computes and stores the epilogue from the registers
//             (lower_dot_wgmma_epilogue.cc).
// Tiles are visited persistently (worker w of W takes tiles w, w + W, ...) in grouped order:
// GROUP_M row tiles share each column band, so the B tiles stay in L2.
#include "metile/lower/lower_dot_wgmma.h"

#include "metile/lower/lower_dot_wgmma_emit.h"
#include "metile/support/bits.h"
#include "metile/support/errors.h"

namespace metile::lower {

namespace {

using wgmma::accumulator_layout;
using wgmma::K;
using wgmma::kWarpGroup;
using wgmma::Tile;
constexpr int64_t kSwizzleColumns = 64;  // 128-byte swizzle rows of 16-bit elements
constexpr int64_t kWgmmaK = 16;
constexpr int kProducerRegisters = 40;
constexpr int kConsumerRegisters = 232;

class WgmmaKernel : wgmma::Emitter {
 public:
  explicit WgmmaKernel(Lowering& l)
      : Emitter(l, *l.schedule_plan.async_gemm),
        stage_elements_(g_.block_m * g_.block_k + g_.block_k * g_.block_n),
        epilogue_(l, g_) {}

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
    return epilogue_.lower(op, tile_);
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

  const int64_t stage_elements_;
  wgmma::Epilogue epilogue_;
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
