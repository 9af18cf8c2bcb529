// A K loop as seed 004's software pipeline of S stages (plan.pipeline_stages: required by
// Schedule(double_buffer=True); chosen by the plan on targets with asynchronous copies, depth
// from num_stages). The canonical loop is `acc = dot(a, b, acc)` carried by a `for` with uniform
// bounds and a positive constant step, whose body holds only the dot, its yield and the copy:
// the pure ops and device loads that compute a [M, K] and b [K, N] from the induction variable
// and values defined before the loop. a and b each get a ring of S slots (typed as the operand,
// rows padded for mma.sync's fragments, pinned in the shared scratch for the loop's lifetime):
//
//   for s in 0 .. S-2:                       (prologue)
//     if start + s*step < end: copy the tiles at start + s*step into slot s
//     commit
//   for k, slot = start, 0 ...:
//     wait until at most S-2 copy groups are in flight (this thread's copies of slot's tiles)
//     barrier (publishes slot to every thread; releases slot - 1, read by the previous step)
//     if k + (S-1)*step < end: copy the tiles at k + (S-1)*step into slot - 1 (mod S)
//     commit
//     consume slot: fragment loads and multiply-accumulates
//     rotate: slot = slot + 1 (mod S)
//   wait for every copy group; barrier (releases the slots)
//
// wgmma's reads of a slot are asynchronous: from three slots a step leaves its wgmma group in
// flight and waits for the previous step's, so the tensor cores multiply while the next copy
// is issued. The step consumes first, and its barrier releases the slot the previous step read:
//
//   prologue as above; wait until at most S-2 groups are in flight; barrier (publishes slot 0)
//   for k, slot = start, 0 ...:
//     consume slot: wgmma group committed; wait until at most one group is in flight
//     wait until at most S-3 copy groups are in flight (this thread's copies of slot + 1)
//     barrier (publishes slot + 1; releases slot - 1, whose group every warp group finished)
//     if k + (S-1)*step < end: copy the tiles at k + (S-1)*step into slot - 1 (mod S)
//     commit; rotate
//   wait for every wgmma group (the accumulators are final), then drain as above
//
// A copy is asynchronous where the operand is a tile load with zero fill (async_copy, which the
// CUDA dialect issues as cp.async and other dialects as a plain copy), else the operand's
// copy ops run and each thread stores its elements. Each copy lowers the Tile IR copy ops again
// with the induction variable bound to its tile's k; the Tile IR loop is read, never changed.
// Validation runs before anything is emitted: a loop that is not canonical is rejected whole
// when the Schedule requires the pipeline, and keeps a single operand buffer otherwise.
// verify_software_pipeline then checks the Metal IR against the record (SoftwarePipeline,
// execution_report.pipelines).
#include <optional>
#include <set>

#include "metile/lower/lower_dot_wgmma.h"
#include "metile/lower/lowering_steps.h"
#include "metile/lower/match_descriptor_gemm.h"
#include "metile/lower/rematerialise.h"

namespace metile::lower {

namespace {

using schedule::PipelineBuffer;
using schedule::SoftwarePipeline;

// The body's ops that compute the dot's a and b, in program order.
std::vector<const ir::Op*> copy_ops(const ir::Block& body, const ir::Op& dot) {
  return block_slice(body, {dot.operands[0], dot.operands[1]});
}

std::string loop_name(const Lowering& l, const ir::Op& loop) {
  return "for " + l.name(loop.regions[0].args[0]) +
         (loop.loc.known() ? " at " + loop.loc.str() : "");
}

// Why the loop is not the canonical pipelined K loop; empty when it is.
std::string why_not_canonical(const Lowering& l, const ir::Op& loop, const FragmentCarry& carry) {
  const ir::Block& body = loop.regions[0];
  const char* roles[] = {"start", "end", "step"};
  for (int i = 0; i < 3; ++i)
    if (!l.get(loop.operands[static_cast<size_t>(i)]).uniform)
      return std::string("its ") + roles[i] + " differs between threads";
  const KernelValues values(l.tile);
  const std::optional<int64_t> step = values.constant_int(loop.operands[2]);
  if (!step || *step <= 0) return "its step is not a positive constant";
  const KRecurrence recurrence = k_recurrence(values, loop);
  if (recurrence.carried != 1)
    return "it carries " + std::to_string(recurrence.carried) +
           " values; the pipelined loop carries only the dot's accumulator";
  if (recurrence.dot != carry.dot) return "it does not carry acc = dot(a, b, acc) alone";
  const std::vector<const ir::Op*> copy = copy_ops(body, *carry.dot);
  const std::set<const ir::Op*> in_copy(copy.begin(), copy.end());
  const std::set<ir::ValueId> carried(body.args.begin() + 1, body.args.end());
  for (const ir::Op& op : body.ops) {
    if (&op == carry.dot || op.kind == ir::OpKind::Yield) continue;
    const std::string what =
        std::string(ir::op_name(op.kind)) + (op.results.empty() ? "" : " " + l.name(op.results[0]));
    if (!in_copy.count(&op))
      return "its body holds " + what +
             ", which is neither the copy of the dot's operands nor the dot";
    const ir::OpInfo& info = ir::op_info(op.kind);
    if (!op.regions.empty() || info.has(ir::Trait::Convergent) || info.has(ir::Trait::WritesMemory))
      return "the operand copy holds " + what + ", which is not a pure op or a load";
    for (ir::ValueId v : op.operands)
      if (carried.count(v)) return "the operand copy reads the carried " + l.name(v);
  }
  const ir::Type& a = l.tile_type(carry.dot->operands[0]);
  const ir::Type& b = l.tile_type(carry.dot->operands[1]);
  if (a.dtype != b.dtype) return "its operands have different element types";
  if (a.shape[1] % 8) return "its K block " + std::to_string(a.shape[1]) + " is no multiple of 8";
  return "";
}

class PipelinedLoop {
 public:
  PipelinedLoop(Lowering& l, const ir::Op& loop, const FragmentCarry& carry)
      : l_(l),
        loop_(loop),
        body_(loop.regions[0]),
        carry_(carry),
        copy_(copy_ops(body_, *carry.dot)),
        wgmma_(l.schedule_plan.strategy == schedule::MatrixStrategy::WgmmaPipelined) {
    for (int operand : {0, 1}) {
      Operand& o = operands_[operand];
      o.name = operand ? "b" : "a";
      o.value = carry.dot->operands[static_cast<size_t>(operand)];
      const ir::Type& t = l_.tile_type(o.value);
      o.layout.rows = t.shape[0];
      o.layout.columns = t.shape[1];
      o.layout.row_stride = staged_row_stride(carry_, t.shape[1]);
      o.layout.swizzled = wgmma_;
      for (const ir::Op* op : copy_)
        if (op->results.size() == 1 && op->results[0] == o.value && async_copyable(l_, *op))
          o.load = op;
      if (wgmma_ && !o.load)
        l_.not_supported(*carry.dot,
                         "the wgmma pipeline copies its operands asynchronously, "
                         "but " +
                             o.name + " is no tile load with zero fill");
    }
    async_ = operands_[0].load || operands_[1].load;
  }

  void lower() {
    const ir::ValueId start = l_.scalar(loop_.operands[0]);
    const ir::ValueId end = l_.scalar(loop_.operands[1]);
    const ir::ValueId step = l_.scalar(loop_.operands[2]);
    std::vector<ir::ValueId> inits =
        wgmma_ ? accumulator_registers() : carried_fragments(l_, carry_, loop_.operands[3]);
    stages_ = fitting_stages();
    in_flight_ = wgmma_ && stages_ >= 3 ? 1 : 0;
    if (in_flight_ && fits(stages_ + 1)) ++stages_;  // Triton's prefetch distance (below)
    allocate();
    // The warp group's index, broadcast from lane 0 so that the CUDA compiler knows it is one
    // value per warp: the a descriptors built from it then stay in uniform registers.
    if (wgmma_)
      warp_group_ = l_.emit(
          ir::OpKind::SimdBroadcast,
          {l_.emit(ir::OpKind::Shr, {l_.thread_index(), l_.const_int(7)}, i32()), l_.const_int(0)},
          i32());

    // Each copied load's run addresses without the step's offset, once for every copy.
    for (Operand& o : operands_)
      if (o.load) o.hoisted = hoist_copy_pointers(l_, *o.load, body_);

    // Prologue: tiles 0 .. S-2 into slots 0 .. S-2, one copy group each.
    for (int s = 0; s + 1 < stages_; ++s) {
      const ir::ValueId k = s == 0 ? start : ahead(start, step, s);
      l_.builder.begin_if(less(k, end));
      copy_tiles(k, l_.const_int(s));
      end_guard("prologue");
      commit();
    }
    if (in_flight_) publish(stages_ - 2);  // tile 0

    inits.push_back(l_.const_int(0));
    ir::Builder::ForScope scope = l_.builder.begin_for(start, end, step, inits);
    const ir::ValueId slot = scope.carried.back();
    std::vector<ir::ValueId> acc(scope.carried.begin(), scope.carried.end() - 1);
    ++l_.nesting;
    // The current slot's tiles are this thread's oldest copies in flight: once they are done,
    // the barrier publishes everyone's and releases the slot the previous step read.
    if (!in_flight_) {
      publish(stages_ - 2);
      copy_ahead(scope.induction_var, step, end, slot);
    }
    const ir::ValueId a = slot_of(operands_[0], slot), b = slot_of(operands_[1], slot);
    acc = wgmma_ ? consume_wgmma(std::move(acc), a, b)
                 : consume_pipeline_slots(l_, carry_, std::move(acc), a, b);
    // The next slot's tiles are this thread's oldest copies in flight; the previous step's
    // group is finished in every warp group once they pass the barrier.
    if (in_flight_) {
      publish(stages_ - 3);
      copy_ahead(scope.induction_var, step, end, slot);
    }
    acc.push_back(rotate(slot, 1));
    --l_.nesting;
    std::vector<ir::ValueId> results = l_.builder.end_for(acc);
    results.pop_back();
    // The accumulators are final once every group is: the wait passes each through an
    // instruction that keeps the epilogue's reads below it.
    if (wgmma_)
      results = l_.builder.create(ir::OpKind::WgmmaWait, results,
                                  std::vector<ir::Type>(results.size(), f32()),
                                  {{"pending", int64_t{0}}});
    // Drain: nothing is left in flight, and the slots are free for the scratch after the loop,
    // unless the loop is inside another region (a persistent kernel's loop over tiles): there
    // the next iteration fills them again, so they stay pinned for the rest of the kernel, which
    // keeps every scratch use of that region apart from them (verify_scratch).
    wait(0);
    l_.threadgroup_barrier();
    if (l_.nesting == 0) l_.allocator.unpin_scratch();

    LoweredValue result;
    if (wgmma_) {
      result.slots = std::move(results);
      result.layout = accumulator_layout();
    } else {
      result.slots = carried_slots(l_, carry_, results, l_.tile_type(loop_.results[0]));
    }
    l_.bind(loop_.results[0], std::move(result));
    record();
  }

 private:
  struct Operand {
    std::string name;
    ir::ValueId value = ir::kNoValue;
    SlotLayout layout;
    const ir::Op* load = nullptr;            // the tile load copied asynchronously, if it is one
    std::optional<HoistedPointers> hoisted;  // its addresses split, where they split
    ir::ValueId buffer = ir::kNoValue;
    int64_t slot_elements() const { return layout.elements(); }
  };

  // ---- wgmma ---------------------------------------------------------------------------
  // The [M, N] accumulator: each warp group of 128 threads owns M / groups rows as m64 blocks,
  // in wgmma's register fragments (plan_schedule gave the tiles of its size this layout).
  int64_t groups() const { return l_.threads / 128; }
  ir::ThreadLayout accumulator_layout() const {
    const ir::Type& acc = l_.tile_type(loop_.operands[3]);
    return wgmma_accumulator_layout(acc.shape[0], acc.shape[1], groups());
  }

  std::vector<ir::ValueId> accumulator_registers() {
    const LoweredValue& init = l_.get(loop_.operands[3]);
    const ir::ThreadLayout layout = accumulator_layout();
    if (init.uniform) return std::vector<ir::ValueId>(layout.elements_per_thread(), init.slots[0]);
    if (!init.layout || !(*init.layout == layout))
      throw InternalError(
          "lower wgmma pipeline: the accumulator's initial value is not in "
          "wgmma's register layout, which plan_schedule gives its tile size");
    return init.slots;
  }

  // acc += a @ b from the current slots: per K step of 16, one wgmma of [64 x 16] a and
  // [16 x N] b per m64 block of this warp group, committed as one group and waited for (all
  // but that group with a read in flight), the registers passing through the wait to the next
  // step's wgmma.
  std::vector<ir::ValueId> consume_wgmma(std::vector<ir::ValueId> acc, ir::ValueId a_slot,
                                         ir::ValueId b_slot) {
    const Operand& a = operands_[0];
    const Operand& b = operands_[1];
    const int64_t rows = a.layout.rows / groups(), n = b.layout.columns;
    const size_t registers = static_cast<size_t>(n / 2);
    const ir::ValueId first_row =
        l_.emit(ir::OpKind::Mul, {warp_group_, l_.const_int(rows * 64)}, i32());
    const ir::ValueId a_group =
        l_.emit(ir::OpKind::PtrAdd, {a_slot, first_row}, l_.metal.type(a_slot));
    l_.emit_void(ir::OpKind::WgmmaFence, {});
    for (int64_t kk = 0; kk < a.layout.columns / 16; ++kk)
      for (int64_t block = 0; block < rows / 64; ++block) {
        std::vector<ir::ValueId> operands = {
            l_.emit(ir::OpKind::PtrAdd, {a_group, l_.const_int(block * 64 * 64 + kk * 16)},
                    l_.metal.type(a_slot)),
            l_.emit(ir::OpKind::PtrAdd, {b_slot, l_.const_int(kk * 16 * 64)},
                    l_.metal.type(b_slot))};
        const auto first = acc.begin() + static_cast<std::ptrdiff_t>(block) *
                                             static_cast<std::ptrdiff_t>(registers);
        operands.insert(operands.end(), first, first + static_cast<std::ptrdiff_t>(registers));
        const std::vector<ir::ValueId> product = l_.builder.create(
            ir::OpKind::WgmmaMma, operands, std::vector<ir::Type>(registers, f32()),
            {{"n", n},
             {"b_block_bytes", b.layout.rows * 64 * ir::dtype_bytes(l_.tile_type(b.value).dtype)}});
        std::copy(product.begin(), product.end(), first);
      }
    l_.emit_void(ir::OpKind::WgmmaCommit, {});
    return l_.builder.create(ir::OpKind::WgmmaWait, acc, std::vector<ir::Type>(acc.size(), f32()),
                             {{"pending", int64_t{in_flight_}}, {"feeds_wgmma_only", int64_t{1}}});
  }

  // The plan's depth, or fewer (down to 2) while the slots do not fit the shared scratch; an
  // explicit num_stages (the loop's, else the launch's) is kept, and a kernel it does not fit
  // is OutOfResources.
  int fitting_stages() const {
    // The loop's own depth (tl.range's num_stages) before the launch's.
    if (loop_.has_attr("num_stages")) return static_cast<int>(loop_.int_attr("num_stages"));
    const int planned = l_.schedule_plan.pipeline_stages;
    if (l_.tile.attrs.count("pipeline_stages")) return planned;
    int stages = planned;
    while (stages > 2 && !fits(stages)) --stages;
    return stages;
  }

  // Triton's num_stages = S buffers wait for tile i with tiles i+1 .. i+S-2 in flight, issued
  // up to S-1 steps ahead; a step that consumes before it waits (wgmma in flight) waits for
  // tile i+1 instead, so it keeps one slot more than asked where the shared memory holds it,
  // and the copies have as long to land as Triton's.
  bool fits(int stages) const {
    const int64_t capacity = l_.allocator.scratch_capacity(l_.target.threadgroup_memory_bytes);
    return stages * slot_bytes() + 1024 <= capacity;
  }

  int64_t slot_bytes() const {
    int64_t bytes = 0;
    for (const Operand& o : operands_)
      bytes += ThreadgroupAllocator::round_up(o.slot_elements() *
                                              ir::dtype_bytes(l_.tile_type(o.value).dtype));
    return bytes;
  }

  void allocate() {
    for (Operand& o : operands_) {
      const ir::DType dtype = l_.tile_type(o.value).dtype;
      const std::string purpose = "pipeline " + o.name + " (" + l_.name(carry_.dot->results[0]) +
                                  ", " + std::to_string(stages_) + " slots)";
      const int64_t elements = stages_ * o.slot_elements();
      // wgmma's swizzled slots start on 1024-byte boundaries.
      const int64_t offset = l_.allocator.pin_scratch(purpose, dtype, elements, wgmma_ ? 1024 : 16);
      buffers_.push_back({o.name, purpose, std::string(ir::dtype_name(dtype)),
                          ir::dtype_bytes(dtype), o.layout.rows, o.layout.columns,
                          o.layout.swizzled ? 0 : o.layout.row_stride, offset});
      o.buffer = l_.emit(ir::OpKind::ThreadgroupBuffer, {},
                         ir::Type::ptr(dtype, ir::AddressSpace::Threadgroup),
                         {{"offset", offset},
                          {"size", elements},
                          {"scratch", std::string("pipeline")},
                          {"slots", int64_t{stages_}}});
    }
  }

  // Closes a guard (an if without results) and marks it as the pipeline's `phase`: its
  // condition is uniform (verify_software_pipeline checks it), so the exchanges of a copy may
  // sit inside it (verify_scratch).
  void end_guard(const std::string& phase) {
    l_.builder.begin_else({});
    l_.builder.end_if({});
    l_.builder.last_op().attrs["pipeline"] = phase;
  }

  void commit() {
    if (async_) l_.emit_void(ir::OpKind::AsyncCopyCommit, {});
  }
  // Waits until at most `pending` of this thread's copy groups are in flight, fences its
  // copies for wgmma's reads through the asynchronous proxy, and a barrier publishes
  // everyone's copies (and releases the slots every thread finished reading).
  void publish(int pending) {
    wait(pending);
    if (wgmma_) l_.emit_void(ir::OpKind::AsyncProxyFence, {});
    l_.threadgroup_barrier();
  }
  // If the tile stages - 1 steps after k exists, copies it into the slot before `slot`; one
  // copy group either way.
  void copy_ahead(ir::ValueId k, ir::ValueId step, ir::ValueId end, ir::ValueId slot) {
    const ir::ValueId next = ahead(k, step, stages_ - 1);
    l_.builder.begin_if(less(next, end));
    copy_tiles(next, rotate(slot, stages_ - 1));
    end_guard("copy");
    commit();
  }
  void wait(int pending) {
    if (async_) l_.emit_void(ir::OpKind::AsyncCopyWait, {}, {{"pending", int64_t{pending}}});
  }

  ir::ValueId less(ir::ValueId a, ir::ValueId b) {
    return l_.emit(ir::OpKind::Cmp, {a, b}, i1(), {{"pred", "lt"}});
  }
  // k + tiles * step.
  ir::ValueId ahead(ir::ValueId k, ir::ValueId step, int tiles) {
    const ir::ValueId span = l_.emit(ir::OpKind::Mul, {step, l_.const_int(tiles)}, i32());
    return l_.emit(ir::OpKind::Add, {k, span}, i32());
  }
  // (slot + by) mod S.
  ir::ValueId rotate(ir::ValueId slot, int by) {
    const ir::ValueId sum = l_.emit(ir::OpKind::Add, {slot, l_.const_int(by)}, i32());
    return l_.emit(ir::OpKind::Rem, {sum, l_.const_int(stages_)}, i32());
  }

  // A pointer to slot `slot` (i32) of an operand's ring.
  ir::ValueId slot_of(const Operand& o, ir::ValueId slot) {
    const ir::ValueId base =
        l_.emit(ir::OpKind::Mul, {slot, l_.const_int(o.slot_elements())}, i32());
    return l_.emit(ir::OpKind::PtrAdd, {o.buffer, base}, l_.metal.type(o.buffer));
  }

  // The copy ops lowered with the induction variable at k (an operand copied asynchronously
  // leaves its load to copy_operand_async), and a and b brought into slot `slot`.
  void copy_tiles(ir::ValueId k, ir::ValueId slot) {
    l_.bind(body_.args[0], LoweredValue({k}, false, true));
    ir::Block copy;
    for (const ir::Op* op : copy_)
      if (op != operands_[0].load && op != operands_[1].load) copy.ops.push_back(*op);
    ++l_.nesting;  // inside its guard
    lower_block(l_, copy);
    for (const Operand& o : operands_) {
      const ir::ValueId at = slot_of(o, slot);
      if (o.load)
        copy_operand_async(l_, *o.load, at, o.layout, o.hoisted ? &*o.hoisted : nullptr);
      else
        publish_tile(l_, o.value, at, 0, o.layout.row_stride);
    }
    --l_.nesting;
  }

  void record() {
    SoftwarePipeline p;
    p.loop = loop_name(l_, loop_);
    p.stages = stages_;
    p.copy = async_ && l_.target.has_async_copy ? schedule::PipelineCopy::Asynchronous
                                                : schedule::PipelineCopy::Synchronous;
    p.buffers = buffers_;
    p.reads_in_flight = in_flight_;
    p.sequence = schedule::dependency_sequence(stages_, in_flight_);
    for (const PipelineBuffer& b : buffers_)
      l_.buffering.push_back({p.loop, b.allocation, stages_, stages_ * b.slot_bytes()});
    l_.pipelines.push_back(std::move(p));
    const ir::Type& acc = l_.tile_type(loop_.operands[3]);
    l_.loops.push_back({loop_name(l_, loop_), acc.num_elements(),
                        static_cast<int>(std::max<int64_t>(1, acc.num_elements() / l_.threads))});
  }

  static ir::Type i32() { return ir::Type::scalar(ir::DType::i32); }
  static ir::Type i1() { return ir::Type::scalar(ir::DType::i1); }
  static ir::Type f32() { return ir::Type::scalar(ir::DType::f32); }

  Lowering& l_;
  const ir::Op& loop_;
  const ir::Block& body_;
  const FragmentCarry carry_;
  const std::vector<const ir::Op*> copy_;
  const bool wgmma_;  // the plan's WgmmaPipelined: swizzled slots, wgmma, register accumulator
  ir::ValueId warp_group_ = ir::kNoValue;  // thread index / 128, warp-uniform (wgmma only)
  // Some copy is an async_copy: commits and waits order them (where the target's copies are
  // synchronous, they are comments).
  bool async_ = false;
  Operand operands_[2];
  int stages_ = 2;
  int in_flight_ = 0;  // wgmma groups left in flight at the end of a step (0 or 1)
  std::vector<PipelineBuffer> buffers_;
};

}  // namespace

std::optional<FragmentCarry> pipelined_carry(const Lowering& l, const ir::Op& loop) {
  if (l.schedule_plan.pipeline_stages < 2 || loop.int_attr_or("num_stages", 2) < 2)
    return std::nullopt;
  std::optional<FragmentCarry> found;
  for (const std::optional<FragmentCarry>& carry : fragment_carries(l, loop))
    if (carry) found = carry;
  if (!found) return std::nullopt;
  const std::string why = why_not_canonical(l, loop, *found);
  if (why.empty()) return found;
  if (l.schedule_plan.double_buffer == true)
    l.not_supported(loop, "Schedule(double_buffer=True) cannot pipeline " + loop_name(l, loop) +
                              " (the canonical K loop is acc = dot(a, b, acc) with operand "
                              "copies only): " +
                              why);
  return std::nullopt;  // the plan's own choice: this loop keeps one operand buffer
}

void lower_pipelined_for(Lowering& l, const ir::Op& loop, const FragmentCarry& carry) {
  PipelinedLoop(l, loop, carry).lower();
}

}  // namespace metile::lower
