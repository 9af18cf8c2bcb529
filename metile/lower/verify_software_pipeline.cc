#include "metile/lower/verify_software_pipeline.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "metile/lower/thread_values.h"

namespace metile::lower {

namespace {

using ir::OpKind;
using ir::ValueId;

[[noreturn]] void fail(const std::string& rule, const std::string& what) {
  throw InternalError("verify_software_pipeline: " + rule + ": " + what);
}

std::string name(ValueId v) {
  return "%" + std::to_string(v);
}

// Where an op sits: its block, its index there, and the ops enclosing it (outermost first).
struct Place {
  const ir::Block* block = nullptr;
  size_t index = 0;
  std::vector<const ir::Op*> enclosing;
};

// One store or fragment load of a pipeline buffer.
struct Access {
  const ir::Op* op = nullptr;
  ValueId slot = ir::kNoValue;   // the slot selector (slot * slot elements), if any
  std::vector<ValueId> offsets;  // the element offsets within the slot
  int wgmma_operand = -1;        // a wgmma_mma's a (0) or b (1), read through a descriptor
};

struct Buffer {
  const ir::Op* op = nullptr;
  int64_t slots = 0, slot_elements = 0;
  std::vector<Access> stores, fragment_loads;
};

class Verifier {
 public:
  Verifier(const ir::Kernel& k, const target::Target& target) : k_(k), target_(target) {
    index(k.body, {});
    threads_ = attr("threads_per_threadgroup");
  }

  std::vector<std::vector<std::string>> run() {
    std::vector<const ir::Op*> loops;
    std::map<const ir::Op*, std::vector<Buffer>> by_loop;
    ir::walk(k_.body, [&](const ir::Op& op) {
      if (op.kind != OpKind::ThreadgroupBuffer || !op.has_attr("scratch") ||
          op.str_attr("scratch") != "pipeline")
        return;
      Buffer b = buffer(op);
      const ir::Op* loop = consuming_loop(b);
      if (!by_loop.count(loop)) loops.push_back(loop);
      by_loop[loop].push_back(std::move(b));
    });
    std::vector<std::vector<std::string>> verified;
    for (const ir::Op* loop : loops) verified.push_back(check_pipeline(*loop, by_loop[loop]));
    return verified;
  }

 private:
  void index(const ir::Block& block, std::vector<const ir::Op*> enclosing) {
    for (size_t i = 0; i < block.ops.size(); ++i) {
      const ir::Op& op = block.ops[i];
      places_[&op] = {&block, i, enclosing};
      for (ValueId r : op.results) definer_[r] = &op;
      for (ValueId o : op.operands) uses_[o].push_back(&op);
      std::vector<const ir::Op*> inner = enclosing;
      inner.push_back(&op);
      for (const ir::Block& region : op.regions) {
        for (size_t a = 0; a < region.args.size(); ++a) region_arg_[region.args[a]] = {&op, a};
        index(region, inner);
      }
    }
  }

  int64_t attr(const char* key) const {
    const auto it = k_.attrs.find(key);
    return it == k_.attrs.end() ? 0 : std::get<int64_t>(it->second);
  }

  const ir::Op* definer(ValueId v) const {
    const auto it = definer_.find(v);
    return it == definer_.end() ? nullptr : it->second;
  }

  bool is_constant(ValueId v, int64_t value) const {
    const ir::Op* def = definer(v);
    return def && def->kind == OpKind::Constant && !ir::is_float(k_.type(v).dtype) &&
           std::get<int64_t>(def->attrs.at("value")) == value;
  }

  // ---- the buffer and its accesses -----------------------------------------------------
  Buffer buffer(const ir::Op& op) {
    Buffer b;
    b.op = &op;
    const ValueId p = op.results[0];
    const int64_t slots = op.int_attr("slots");
    const int64_t size = op.int_attr("size");
    if (slots < 2 || size % slots)
      fail("types", "pipeline buffer " + name(p) + " has " + std::to_string(slots) + " slots of " +
                        std::to_string(size) + " elements; a pipeline has two or more equal slots");
    b.slots = slots;
    b.slot_elements = size / slots;
    const ir::DType dtype = k_.type(p).dtype;
    const int64_t end = op.int_attr("offset") + size * ir::dtype_bytes(dtype);
    if (end > attr("threadgroup_bytes") || end > target_.threadgroup_memory_bytes)
      fail("threadgroup capacity",
           "pipeline buffer " + name(p) + " ends at byte " + std::to_string(end) +
               ", past the kernel's threadgroup_bytes = " +
               std::to_string(attr("threadgroup_bytes")) + " or target " + target_.name + "'s " +
               std::to_string(target_.threadgroup_memory_bytes));
    collect(b, p, {});
    for (const Access& a : b.stores)
      if (k_.type(a.op->operands[1]).dtype != dtype)
        fail("types", "a store into pipeline buffer " + name(p) + " moves " +
                          std::string(ir::dtype_name(k_.type(a.op->operands[1]).dtype)) + ", not " +
                          std::string(ir::dtype_name(dtype)));
    for (const Access& a : b.fragment_loads)
      if (a.wgmma_operand < 0 && k_.type(a.op->results[0]).dtype != dtype)
        fail("types", "fragment load " + name(a.op->results[0]) + " of pipeline buffer " + name(p) +
                          " reads " + std::string(ir::dtype_name(k_.type(a.op->results[0]).dtype)) +
                          " fragments, not " + std::string(ir::dtype_name(dtype)));
    return b;
  }

  // The accesses through pointer q, whose ptr_add offsets from the buffer are `offsets`.
  void collect(Buffer& b, ValueId q, std::vector<ValueId> offsets) {
    for (const ir::Op* use : uses_[q]) {
      if (use->kind == OpKind::PtrAdd && use->operands[0] == q) {
        std::vector<ValueId> more = offsets;
        more.push_back(use->operands[1]);
        collect(b, use->results[0], more);
        continue;
      }
      Access a;
      a.op = use;
      a.offsets = offsets;
      if (!a.offsets.empty()) {
        const ir::Op* first = definer(a.offsets[0]);
        if (first && first->kind == OpKind::Mul &&
            is_constant(first->operands[1], b.slot_elements)) {
          a.slot = first->operands[0];
          a.offsets.erase(a.offsets.begin());
        }
      }
      if ((use->kind == OpKind::Store || use->kind == OpKind::AsyncCopy) && use->operands[0] == q) {
        b.stores.push_back(a);
      } else if (use->kind == OpKind::MatrixLoad && use->operands[0] == q) {
        a.offsets.push_back(use->operands[1]);
        b.fragment_loads.push_back(a);
      } else if (use->kind == OpKind::WgmmaMma &&
                 (use->operands[0] == q || use->operands[1] == q)) {
        a.wgmma_operand = use->operands[0] == q ? 0 : 1;
        b.fragment_loads.push_back(a);
      } else {
        fail("copy ownership", std::string(ir::op_name(use->kind)) + " uses pipeline buffer " +
                                   name(b.op->results[0]) +
                                   "; only stores and async copies (the copies) and fragment "
                                   "loads (the consume step) may");
      }
    }
  }

  const ir::Op* consuming_loop(const Buffer& b) const {
    const ir::Op* loop = nullptr;
    for (const Access& a : b.fragment_loads) {
      const Place& place = places_.at(a.op);
      const ir::Op* parent = place.enclosing.empty() ? nullptr : place.enclosing.back();
      if (!parent || parent->kind != OpKind::For || (loop && loop != parent))
        fail("copy ownership", "fragment load " + name(a.op->results[0]) + " of pipeline buffer " +
                                   name(b.op->results[0]) +
                                   " is not in the body of the one loop that consumes it");
      loop = parent;
    }
    if (!loop) fail("copy ownership", "no loop reads pipeline buffer " + name(b.op->results[0]));
    return loop;
  }

  // ---- one pipeline --------------------------------------------------------------------
  std::vector<std::string> check_pipeline(const ir::Op& loop, const std::vector<Buffer>& buffers) {
    const ir::Block& body = loop.regions[0];
    const int64_t stages = buffers[0].slots;
    for (const Buffer& b : buffers)
      if (b.slots != stages)
        fail("types", "pipeline buffers " + name(buffers[0].op->results[0]) + " and " +
                          name(b.op->results[0]) + " of one loop have different slot counts");
    const std::vector<const ir::Op*> prologue = guards_before(loop);
    const ir::Op* copy = nullptr;
    for (const ir::Op& op : body.ops)
      if (op.kind == OpKind::If && op.has_attr("pipeline") && op.str_attr("pipeline") == "copy")
        copy = &op;
    if (static_cast<int64_t>(prologue.size()) != stages - 1)
      fail("publication", "the loop has " + std::to_string(prologue.size()) +
                              " if {pipeline = \"prologue\"} before it; a pipeline of " +
                              std::to_string(stages) + " slots copies its first " +
                              std::to_string(stages - 1) + " tiles there");
    if (!copy) fail("copy ownership", "the loop's body has no if {pipeline = \"copy\"}");

    // The current slot: the carried value the fragment loads select by.
    const ValueId current = buffers[0].fragment_loads[0].slot;
    const auto arg = region_arg_.find(current);
    if (current == ir::kNoValue || arg == region_arg_.end() || arg->second.first != &loop ||
        arg->second.second == 0)
      fail("slot reuse", "the fragment loads do not select a slot carried by the loop");
    const size_t carried = arg->second.second - 1;
    for (const Buffer& b : buffers)
      for (const Access& a : b.fragment_loads)
        if (a.slot != current)
          fail("slot reuse", "fragment load " + name(a.op->results[0]) +
                                 " does not read the current slot " + name(current));

    check_uniform(loop, prologue, *copy);
    check_slot_reuse(loop, carried, current, stages);
    for (const Buffer& b : buffers) {
      check_fragment_bounds(b);
      check_copies(b, prologue, *copy, current);
    }
    check_publication(loop, prologue, *copy, buffers, stages);
    return {"types",          "threadgroup capacity", "uniform control flow",
            "copy ownership", "fragment bounds",      "publication",
            "slot reuse"};
  }

  // The if {pipeline = "prologue"} ops in the loop's block before it and after any earlier
  // loop (whose prologue those before it are), in order.
  std::vector<const ir::Op*> guards_before(const ir::Op& loop) const {
    const Place& place = places_.at(&loop);
    std::vector<const ir::Op*> found;
    for (size_t i = 0; i < place.index; ++i) {
      const ir::Op& op = place.block->ops[i];
      if (op.kind == OpKind::For) found.clear();
      if (op.kind == OpKind::If && op.has_attr("pipeline") && op.str_attr("pipeline") == "prologue")
        found.push_back(&op);
    }
    return found;
  }

  // Whether v may differ between threads: it derives from a thread index, SIMD lane or
  // group, or a loaded value.
  bool varying(ValueId v) {
    if (const auto it = varying_.find(v); it != varying_.end()) return it->second;
    varying_[v] = false;  // a loop-carried cycle adds nothing
    bool result = false;
    if (const ir::Op* def = definer(v)) {
      const OpKind kind = def->kind;
      result = kind == OpKind::ThreadIndex || kind == OpKind::SimdLane ||
               kind == OpKind::SimdGroup || kind == OpKind::Load || kind == OpKind::PackedLoad ||
               kind == OpKind::MatrixLoad;
      for (ValueId o : def->operands) result = result || varying(o);
    } else if (const auto arg = region_arg_.find(v); arg != region_arg_.end()) {
      const ir::Op& loop = *arg->second.first;
      for (ValueId o : loop.operands) result = result || varying(o);
    }
    varying_[v] = result;
    return result;
  }

  void check_uniform(const ir::Op& loop, const std::vector<const ir::Op*>& prologue,
                     const ir::Op& copy) {
    for (int i = 0; i < 3; ++i)
      if (varying(loop.operands[static_cast<size_t>(i)]))
        fail("uniform control flow", "the pipelined loop's bound " +
                                         name(loop.operands[static_cast<size_t>(i)]) +
                                         " differs between threads");
    std::vector<const ir::Op*> guards = prologue;
    guards.push_back(&copy);
    for (const ir::Op* guard : guards)
      if (varying(guard->operands[0]))
        fail("uniform control flow", "the " + guard->str_attr("pipeline") + " guard's condition " +
                                         name(guard->operands[0]) + " differs between threads");
  }

  // The loop starts at slot 0, the prologue's first, and yields (current + 1) mod stages.
  void check_slot_reuse(const ir::Op& loop, size_t carried, ValueId current, int64_t stages) {
    if (!is_constant(loop.operands[3 + carried], 0))
      fail("slot reuse", "the loop's current slot " + name(current) +
                             " does not start at slot 0, which the prologue fills first");
    const ValueId next = loop.regions[0].ops.back().operands[carried];
    if (!is_rotation(next, current, 1, stages))
      fail("slot reuse", "the loop yields " + name(next) + " for its current slot, not (" +
                             name(current) + " + 1) mod " + std::to_string(stages) +
                             ": the slots do not rotate");
  }

  // Whether v is (current + by) mod stages.
  bool is_rotation(ValueId v, ValueId current, int64_t by, int64_t stages) const {
    const ir::Op* rem = definer(v);
    if (!rem || rem->kind != OpKind::Rem || !is_constant(rem->operands[1], stages)) return false;
    const ir::Op* add = definer(rem->operands[0]);
    return add && add->kind == OpKind::Add &&
           ((add->operands[0] == current && is_constant(add->operands[1], by)) ||
            (add->operands[1] == current && is_constant(add->operands[0], by)));
  }

  bool inside(const ir::Op& op, const ir::Op& region_owner) const {
    const std::vector<const ir::Op*>& e = places_.at(&op).enclosing;
    return std::find(e.begin(), e.end(), &region_owner) != e.end();
  }

  // The prologue's copy i fills slot i; the loop's copy fills the slot read last, (current +
  // stages - 1) mod stages, never the current one.
  void check_copies(const Buffer& b, const std::vector<const ir::Op*>& prologue, const ir::Op& copy,
                    ValueId current) {
    const std::string buffer = "pipeline buffer " + name(b.op->results[0]);
    std::vector<std::vector<const Access*>> first(prologue.size());
    std::vector<const Access*> next;
    for (const Access& a : b.stores) {
      const auto guard = std::find_if(prologue.begin(), prologue.end(),
                                      [&](const ir::Op* g) { return inside(*a.op, *g); });
      if (guard != prologue.end()) {
        const int64_t slot = guard - prologue.begin();
        if (a.slot == ir::kNoValue ? slot != 0 : !is_constant(a.slot, slot))
          fail("copy ownership", "the prologue's copy " + std::to_string(slot) + " stores into " +
                                     buffer + " outside slot " + std::to_string(slot));
        first[static_cast<size_t>(slot)].push_back(&a);
      } else if (inside(*a.op, copy)) {
        if (a.slot == current)
          fail("slot reuse",
               "the copy stores into the current slot of " + buffer + ", which the body reads");
        if (!is_rotation(a.slot, current, b.slots - 1, b.slots))
          fail("copy ownership",
               "the copy stores into " + buffer + " outside the slot read last, (" + name(current) +
                   " + " + std::to_string(b.slots - 1) + ") mod " + std::to_string(b.slots));
        next.push_back(&a);
      } else {
        fail("copy ownership",
             "a store into " + buffer + " is neither in the prologue nor in the loop's copy");
      }
    }
    const std::vector<bool> read = read_elements(b);
    for (size_t i = 0; i < first.size(); ++i)
      check_each_element_once(b, read, first[i], "the prologue's copy " + std::to_string(i));
    check_each_element_once(b, read, next, "the copy");
  }

  // Every thread's stores of one copy together write each element of the slot at most once,
  // and each element the fragment loads read exactly once (rows may be padded). An async_copy
  // writes its elements whatever its predicate: zeros where it is false.
  void check_each_element_once(const Buffer& b, const std::vector<bool>& read,
                               const std::vector<const Access*>& stores, const std::string& phase) {
    std::vector<int> writes(static_cast<size_t>(b.slot_elements), 0);
    for (int64_t t = 0; t < threads_; ++t) {
      ThreadValueMemo memo;
      for (const Access* a : stores) {
        const bool copy = a->op->kind == OpKind::AsyncCopy;
        if (!copy && a->op->operands.size() > 2) {
          const std::optional<int64_t> mask = value(a->op->operands[2], t, memo);
          if (!mask) fail("copy ownership", phase + "'s store mask is no function of the thread");
          if (!*mask) continue;
        }
        const std::optional<int64_t> e = element(*a, t, memo);
        const int64_t count = copy ? a->op->int_attr("elements") : 1;
        if (!e || *e < 0 || *e + count > b.slot_elements)
          fail("copy ownership", phase + " stores element " + (e ? std::to_string(*e) : "?") +
                                     " of a slot of " + std::to_string(b.slot_elements) +
                                     " elements of pipeline buffer " + name(b.op->results[0]) +
                                     " in thread " + std::to_string(t));
        for (int64_t i = 0; i < count; ++i) ++writes[static_cast<size_t>(*e + i)];
      }
    }
    for (size_t e = 0; e < writes.size(); ++e)
      if (writes[e] > 1 || (writes[e] == 0 && read[e]))
        fail("copy ownership", phase + " writes element " + std::to_string(e) +
                                   " of pipeline buffer " + name(b.op->results[0]) + " " +
                                   std::to_string(writes[e]) +
                                   " times; each copy writes every element read once");
  }

  // The element ranges [begin, end) of its slot a fragment read covers in thread t: a
  // matrix_load's rows (columns wide, stride apart); a wgmma_mma's a, the 64 whole swizzled
  // rows (64 elements each) from its start; its b, the 16 rows from its start in each 64-column
  // block (b_block_bytes apart). Nothing when the offsets are no function of the thread.
  std::vector<std::pair<int64_t, int64_t>> read_ranges(const Buffer& b, const Access& a,
                                                       int64_t t) {
    ThreadValueMemo memo;
    const std::optional<int64_t> start = element(a, t, memo);
    if (!start) return {};
    std::vector<std::pair<int64_t, int64_t>> ranges;
    if (a.wgmma_operand == 0) return {{*start / 64 * 64, *start / 64 * 64 + 64 * 64}};
    if (a.wgmma_operand == 1) {
      const int64_t block =
          a.op->int_attr("b_block_bytes") / ir::dtype_bytes(k_.type(b.op->results[0]).dtype);
      for (int64_t n = 0; n < a.op->int_attr("n") / 64; ++n)
        ranges.push_back({n * block + *start, n * block + *start + 16 * 64});
      return ranges;
    }
    const std::optional<int64_t> stride = value(a.op->operands[2], t, memo);
    const std::vector<int64_t>& shape = k_.type(a.op->results[0]).shape;
    if (!stride || *stride < shape[1]) return {};
    for (int64_t r = 0; r < shape[0]; ++r)
      ranges.push_back({*start + r * *stride, *start + r * *stride + shape[1]});
    return ranges;
  }

  // The slot elements some SIMD group's fragment read covers (check_fragment_bounds first).
  std::vector<bool> read_elements(const Buffer& b) {
    std::vector<bool> read(static_cast<size_t>(b.slot_elements), false);
    const int64_t groups = std::max<int64_t>(1, threads_ / target_.simd_width);
    for (const Access& a : b.fragment_loads)
      for (int64_t g = 0; g < groups; ++g)
        for (const auto& [begin, end] : read_ranges(b, a, g * target_.simd_width))
          for (int64_t e = begin; e < end; ++e) read[static_cast<size_t>(e)] = true;
    return read;
  }

  // Each SIMD group's fragment reads lie inside the slot.
  void check_fragment_bounds(const Buffer& b) {
    const int64_t groups = std::max<int64_t>(1, threads_ / target_.simd_width);
    for (const Access& a : b.fragment_loads)
      for (int64_t g = 0; g < groups; ++g) {
        const std::vector<std::pair<int64_t, int64_t>> ranges =
            read_ranges(b, a, g * target_.simd_width);
        bool inside = !ranges.empty();
        for (const auto& [begin, end] : ranges) inside &= begin >= 0 && end <= b.slot_elements;
        if (!inside)
          fail("fragment bounds", std::string(ir::op_name(a.op->kind)) + " of SIMD group " +
                                      std::to_string(g) + " reads past its slot of " +
                                      std::to_string(b.slot_elements) +
                                      " elements of pipeline buffer " + name(b.op->results[0]));
      }
  }

  // Two orders of a step. Copy first: a barrier at the top of the body publishes the current
  // slot (copied stages - 1 steps earlier) before its fragment loads and releases the slot read
  // last before the copy refills it; asynchronous copies are waited for before it (at most
  // stages - 2 groups, the later tiles', left in flight). Consume first (wgmma leaving a group
  // in flight): a barrier before the loop publishes slot 0, and one between the body's reads
  // and its copy publishes the next slot (at most stages - 3 groups left in flight) and
  // releases the slot the previous step read, whose wgmma group this thread's wgmma_wait
  // (at most one group pending) finished before it. Either way, each copy is committed as a
  // group of its own, wgmma's reads see the copies through an async_proxy_fence before the
  // publishing barrier, and a barrier after the loop releases the slots.
  void check_publication(const ir::Op& loop, const std::vector<const ir::Op*>& prologue,
                         const ir::Op& copy, const std::vector<Buffer>& buffers, int64_t stages) {
    const ir::Block& body = loop.regions[0];
    const size_t copy_at = places_.at(&copy).index;
    size_t first_read = copy_at, last_read = 0;
    bool asynchronous = false, wgmma = false;
    for (const Buffer& b : buffers) {
      for (const Access& a : b.fragment_loads) {
        first_read = std::min(first_read, top_index(*a.op, body));
        last_read = std::max(last_read, top_index(*a.op, body));
        wgmma |= a.wgmma_operand >= 0;
      }
      for (const Access& a : b.stores) asynchronous |= a.op->kind == OpKind::AsyncCopy;
    }
    const Place& place = places_.at(&loop);
    if (!barrier_in(*place.block, place.index + 1, place.block->ops.size()))
      fail("publication", "no barrier after the loop releases its slots");
    if (const std::optional<size_t> top = barrier_in(body, 0, first_read + 1);
        top && *top < first_read) {
      check_published(body, 0, *top, stages - 2, asynchronous, wgmma, "the current slot");
      if (wgmma && !wgmma_wait_between(body, last_read + 1, body.ops.size(), 0))
        fail("publication",
             "no wgmma_wait {pending = 0} after the body's wgmma releases the current slot "
             "before the next step's copy refills it");
    } else {
      const std::optional<size_t> middle = barrier_in(body, last_read + 1, copy_at);
      if (!middle)
        fail("publication",
             "no barrier at the top of the loop's body publishes the current slot before its "
             "fragment loads and releases the slot read last before the copy refills it, nor "
             "between the fragment loads and the copy");
      if (stages < 3)
        fail("publication",
             "a pipeline that consumes before it copies needs three or more "
             "slots; this one has " +
                 std::to_string(stages));
      check_published(body, last_read + 1, *middle, stages - 3, asynchronous, wgmma,
                      "the next slot");
      if (wgmma && !wgmma_wait_between(body, last_read + 1, *middle, 1))
        fail("publication",
             "no wgmma_wait leaving at most 1 group in flight precedes the barrier that "
             "releases the slot the previous step read");
      const size_t after_prologue = prologue.empty() ? 0 : places_.at(prologue.back()).index + 1;
      const std::optional<size_t> before = barrier_in(*place.block, after_prologue, place.index);
      if (!before) fail("publication", "no barrier before the loop publishes slot 0");
      check_published(*place.block, after_prologue, *before, stages - 2, asynchronous, wgmma,
                      "slot 0");
    }
    if (!asynchronous) return;
    for (const ir::Op* guard : prologue)
      if (!commit_after(*guard))
        fail("publication", "a prologue copy is not committed as a copy group of its own");
    if (!commit_after(copy))
      fail("publication", "the loop's copy is not committed as a copy group of its own");
  }

  // block.ops[from, barrier) wait for this thread's copies but `pending` groups (asynchronous
  // copies) and fence them for wgmma's reads, so that the barrier publishes `what`.
  void check_published(const ir::Block& block, size_t from, size_t barrier, int64_t pending,
                       bool asynchronous, bool wgmma, const std::string& what) {
    if (!asynchronous) return;
    std::optional<int64_t> waited;
    bool fenced = false;
    for (size_t i = from; i < barrier; ++i) {
      if (block.ops[i].kind == OpKind::AsyncCopyWait) waited = block.ops[i].int_attr("pending");
      fenced |= block.ops[i].kind == OpKind::AsyncProxyFence;
    }
    if (!waited || *waited > pending)
      fail("publication", "no async_copy_wait leaving at most " + std::to_string(pending) +
                              " copy groups in flight precedes the barrier that publishes " + what);
    if (wgmma && !fenced)
      fail("publication",
           "no async_proxy_fence before the barrier makes the copies visible to "
           "wgmma's asynchronous reads");
  }

  // Whether a wgmma_wait among block.ops[from, to) leaves at most `pending` groups in flight.
  static bool wgmma_wait_between(const ir::Block& block, size_t from, size_t to, int64_t pending) {
    for (size_t i = from; i < to; ++i)
      if (block.ops[i].kind == OpKind::WgmmaWait && block.ops[i].int_attr("pending") <= pending)
        return true;
    return false;
  }

  // Whether the op after `op` in its block is an async_copy_commit.
  bool commit_after(const ir::Op& op) const {
    const Place& place = places_.at(&op);
    return place.index + 1 < place.block->ops.size() &&
           place.block->ops[place.index + 1].kind == OpKind::AsyncCopyCommit;
  }

  // The index in `block` of the op that is or encloses op.
  size_t top_index(const ir::Op& op, const ir::Block& block) const {
    const Place& place = places_.at(&op);
    if (place.block == &block) return place.index;
    for (const ir::Op* e : place.enclosing)
      if (places_.at(e).block == &block) return places_.at(e).index;
    throw InternalError("verify_software_pipeline: op outside the block");
  }

  // The index of the first threadgroup barrier among block.ops[from, to).
  static std::optional<size_t> barrier_in(const ir::Block& block, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const ir::Op& op = block.ops[i];
      if (op.kind == OpKind::Barrier && op.str_attr("scope") == "threadgroup" &&
          (op.str_attr("mem") == "threadgroup" || op.str_attr("mem") == "all"))
        return i;
    }
    return std::nullopt;
  }

  // The element an access starts at within its slot, in thread t.
  std::optional<int64_t> element(const Access& a, int64_t t, ThreadValueMemo& memo) {
    int64_t sum = 0;
    for (ValueId o : a.offsets) {
      const std::optional<int64_t> x = value(o, t, memo);
      if (!x) return std::nullopt;
      sum += *x;
    }
    return sum;
  }

  // The integer value of v in thread t, when it is a compile-time function of the thread.
  std::optional<int64_t> value(ValueId v, int64_t t, ThreadValueMemo& memo) {
    return thread_value(
        k_, [this](ValueId x) { return definer(x); }, target_.simd_width, v, t, memo);
  }

  const ir::Kernel& k_;
  const target::Target& target_;
  int64_t threads_ = 0;
  std::map<const ir::Op*, Place> places_;
  std::map<ValueId, const ir::Op*> definer_;
  std::map<ValueId, std::vector<const ir::Op*>> uses_;
  std::map<ValueId, std::pair<const ir::Op*, size_t>> region_arg_;
  std::map<ValueId, bool> varying_;
};

}  // namespace

std::vector<std::vector<std::string>> verify_software_pipeline(const ir::Kernel& metal,
                                                               const target::Target& target) {
  return Verifier(metal, target).run();
}

}  // namespace metile::lower
