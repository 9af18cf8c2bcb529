// A K loop as seed 004's two-stage software pipeline (Schedule(double_buffer=True)). The
// canonical loop is `acc = dot(a, b, acc)` carried by a `for` with uniform bounds and a
// positive constant step, whose body holds only the dot, its yield and the copy: the pure ops
// and device loads that compute a [M, K] and b [K, N] from the induction variable and values
// defined before the loop. a and b each get a buffer of two slots (typed as the operand, in
// the shared scratch region, live from the prologue to the loop's last barrier):
//
//   if start < end:                      (an empty K dimension skips the pipeline)
//     copy the tiles at k = start into slot 0; barrier (publish)
//   for k, slot = start, 0 ...:
//     if k + step < end: copy the tiles at k + step into slot 1 - slot (the free slot)
//     consume slot: fragment loads and multiply-accumulates
//     barrier (publish the free slot, release the current one); rotate: slot = 1 - slot
//
// The last iteration's copy finds no tile, so it is the drain: it consumes and releases the
// final tiles. Each copy lowers the Tile IR copy ops again with the induction variable bound
// to its tile's k; the Tile IR loop is read, never changed. Validation runs before anything
// is emitted, so an unsupported loop is rejected whole; verify_software_pipeline then checks
// the Metal IR against the record (SoftwarePipeline, execution_report.pipelines).
#include <optional>
#include <set>

#include "metile/lower/lowering_steps.h"
#include "metile/lower/match_descriptor_gemm.h"

namespace metile::lower {

namespace {

using schedule::PipelineBuffer;
using schedule::SoftwarePipeline;

constexpr int kStages = 2;

// The body's ops that compute the dot's a and b, in program order.
std::vector<const ir::Op*> copy_ops(const ir::Block& body, const ir::Op& dot) {
  std::set<ir::ValueId> needed = {dot.operands[0], dot.operands[1]};
  std::vector<const ir::Op*> copy;
  for (auto it = body.ops.rbegin(); it != body.ops.rend(); ++it) {
    bool produces = false;
    for (ir::ValueId r : it->results) produces = produces || needed.count(r);
    if (!produces) continue;
    copy.insert(copy.begin(), &*it);
    needed.insert(it->operands.begin(), it->operands.end());
  }
  return copy;
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
        a_(carry.dot->operands[0]),
        b_(carry.dot->operands[1]),
        copy_(copy_ops(body_, *carry.dot)) {}

  void lower() {
    const ir::ValueId start = l_.scalar(loop_.operands[0]);
    const ir::ValueId end = l_.scalar(loop_.operands[1]);
    const ir::ValueId step = l_.scalar(loop_.operands[2]);
    std::vector<ir::ValueId> inits = carried_fragments(l_, carry_, loop_.operands[3]);
    allocate();

    // Prologue: the first tiles into slot 0, published.
    l_.builder.begin_if(l_.emit(ir::OpKind::Cmp, {start, end}, i1(), {{"pred", "lt"}}));
    copy_tiles(start, a_buffer_, b_buffer_);
    l_.threadgroup_barrier();
    end_guard("prologue");

    inits.push_back(l_.const_int(0));
    ir::Builder::ForScope scope = l_.builder.begin_for(start, end, step, inits);
    const ir::ValueId slot = scope.carried.back();
    std::vector<ir::ValueId> acc(scope.carried.begin(), scope.carried.end() - 1);
    ++l_.nesting;
    // Steady: the next tiles into the free slot while the current one stays readable.
    const ir::ValueId next = l_.emit(ir::OpKind::Add, {scope.induction_var, step}, i32());
    const ir::ValueId free = l_.emit(ir::OpKind::Xor, {slot, l_.const_int(1)}, i32());
    l_.builder.begin_if(l_.emit(ir::OpKind::Cmp, {next, end}, i1(), {{"pred", "lt"}}));
    copy_tiles(next, slot_of(a_buffer_, free, a_elements_), slot_of(b_buffer_, free, b_elements_));
    end_guard("copy");
    acc = consume_pipeline_slots(l_, carry_, std::move(acc), slot_of(a_buffer_, slot, a_elements_),
                                 slot_of(b_buffer_, slot, b_elements_));
    l_.threadgroup_barrier();  // publishes the free slot, releases the current one
    acc.push_back(free);       // rotate
    --l_.nesting;
    std::vector<ir::ValueId> results = l_.builder.end_for(acc);
    results.pop_back();

    LoweredValue result;
    result.slots = carried_slots(l_, carry_, results, l_.tile_type(loop_.results[0]));
    l_.bind(loop_.results[0], std::move(result));
    record();
  }

 private:
  void allocate() {
    a_elements_ = l_.tile_type(a_).num_elements();
    b_elements_ = l_.tile_type(b_).num_elements();
    a_buffer_ = buffer("a", a_);
    b_buffer_ = buffer("b", b_);
  }

  // The operand's two slots, in a region of their own (pipeline_bytes counted it up front):
  // the copies' own exchanges use the shared scratch while a slot is live.
  ir::ValueId buffer(const std::string& operand, ir::ValueId value) {
    const ir::Type& t = l_.tile_type(value);
    const std::string purpose =
        "pipeline " + operand + " (" + l_.name(carry_.dot->results[0]) + ", 2 slots)";
    const int64_t elements = kStages * t.num_elements();
    const int64_t offset = l_.allocator.allocate_private(purpose, t.dtype, elements);
    buffers_.push_back({operand, purpose, std::string(ir::dtype_name(t.dtype)),
                        ir::dtype_bytes(t.dtype), t.shape[0], t.shape[1], offset});
    return l_.emit(ir::OpKind::ThreadgroupBuffer, {},
                   ir::Type::ptr(t.dtype, ir::AddressSpace::Threadgroup),
                   {{"offset", offset},
                    {"size", elements},
                    {"scratch", std::string("pipeline")},
                    {"slots", int64_t{kStages}}});
  }

  // Closes a guard (an if without results) and marks it as the pipeline's `phase`: its
  // condition is uniform (verify_software_pipeline checks it), so the exchanges of a copy may
  // sit inside it (verify_scratch).
  void end_guard(const std::string& phase) {
    l_.builder.begin_else({});
    l_.builder.end_if({});
    l_.builder.last_op().attrs["pipeline"] = phase;
  }

  // A pointer to slot `slot` (i32) of a buffer of `elements`-element slots.
  ir::ValueId slot_of(ir::ValueId buffer, ir::ValueId slot, int64_t elements) {
    const ir::ValueId base = l_.emit(ir::OpKind::Mul, {slot, l_.const_int(elements)}, i32());
    return l_.emit(ir::OpKind::PtrAdd, {buffer, base}, l_.metal.type(buffer));
  }

  // The copy ops lowered with the induction variable at k, and a and b stored into the slots.
  void copy_tiles(ir::ValueId k, ir::ValueId a_slot, ir::ValueId b_slot) {
    l_.bind(body_.args[0], LoweredValue({k}, false, true));
    ir::Block copy;
    for (const ir::Op* op : copy_) copy.ops.push_back(*op);
    ++l_.nesting;  // inside its guard
    lower_block(l_, copy);
    --l_.nesting;
    publish_tile(l_, a_, a_slot, 0);
    publish_tile(l_, b_, b_slot, 0);
  }

  void record() {
    SoftwarePipeline p;
    p.loop = loop_name(l_, loop_);
    p.stages = kStages;
    p.buffers = buffers_;
    p.sequence = schedule::dependency_sequence(kStages);
    for (const PipelineBuffer& b : buffers_)
      l_.buffering.push_back({p.loop, b.allocation, kStages, kStages * b.slot_bytes()});
    l_.pipelines.push_back(std::move(p));
    const ir::Type& acc = l_.tile_type(loop_.operands[3]);
    l_.loops.push_back({loop_name(l_, loop_), acc.num_elements(),
                        static_cast<int>(std::max<int64_t>(1, acc.num_elements() / l_.threads))});
  }

  static ir::Type i32() { return ir::Type::scalar(ir::DType::i32); }
  static ir::Type i1() { return ir::Type::scalar(ir::DType::i1); }

  Lowering& l_;
  const ir::Op& loop_;
  const ir::Block& body_;
  const FragmentCarry carry_;
  const ir::ValueId a_, b_;
  const std::vector<const ir::Op*> copy_;
  int64_t a_elements_ = 0, b_elements_ = 0;
  ir::ValueId a_buffer_ = ir::kNoValue, b_buffer_ = ir::kNoValue;
  std::vector<PipelineBuffer> buffers_;
};

}  // namespace

std::optional<FragmentCarry> pipelined_carry(const Lowering& l, const ir::Op& loop) {
  if (l.schedule_plan.double_buffer != true) return std::nullopt;
  std::optional<FragmentCarry> found;
  for (const std::optional<FragmentCarry>& carry : fragment_carries(l, loop))
    if (carry) found = carry;
  if (!found) return std::nullopt;
  if (const std::string why = why_not_canonical(l, loop, *found); !why.empty())
    l.not_supported(loop, "Schedule(double_buffer=True) cannot pipeline " + loop_name(l, loop) +
                              " (the canonical K loop is acc = dot(a, b, acc) with operand "
                              "copies only): " +
                              why);
  return found;
}

int64_t pipeline_bytes(const ir::Kernel& tile, const schedule::SchedulePlan& plan) {
  if (plan.double_buffer != true) return 0;
  int64_t bytes = 0;
  ir::walk(tile.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::For) return;
    for (const ir::Op& inner : op.regions[0].ops)
      if (inner.kind == ir::OpKind::Dot && tile.type(inner.operands[0]).is_tile())
        for (int operand : {0, 1}) {
          const ir::Type& t = tile.type(inner.operands[operand]);
          bytes +=
              ThreadgroupAllocator::round_up(kStages * t.num_elements() * ir::dtype_bytes(t.dtype));
        }
  });
  return bytes;
}

void lower_pipelined_for(Lowering& l, const ir::Op& loop, const FragmentCarry& carry) {
  PipelinedLoop(l, loop, carry).lower();
}

}  // namespace metile::lower
