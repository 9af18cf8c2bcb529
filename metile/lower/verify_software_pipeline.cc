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
};

struct Buffer {
  const ir::Op* op = nullptr;
  int64_t slot_elements = 0;
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
    if (slots != 2 || size % 2)
      fail("types", "pipeline buffer " + name(p) + " has " + std::to_string(slots) + " slots of " +
                        std::to_string(size) +
                        " elements; the synchronous pipeline has two equal slots");
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
      if (k_.type(a.op->results[0]).dtype != dtype)
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
      if (use->kind == OpKind::Store && use->operands[0] == q) {
        b.stores.push_back(a);
      } else if (use->kind == OpKind::MatrixLoad && use->operands[0] == q) {
        a.offsets.push_back(use->operands[1]);
        b.fragment_loads.push_back(a);
      } else {
        fail("copy ownership", std::string(ir::op_name(use->kind)) + " uses pipeline buffer " +
                                   name(b.op->results[0]) +
                                   "; only stores (the copies) and fragment loads (the consume "
                                   "step) may");
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
    const ir::Op* prologue = guard_before(loop);
    const ir::Op* copy = nullptr;
    for (const ir::Op& op : body.ops)
      if (op.kind == OpKind::If && op.has_attr("pipeline") && op.str_attr("pipeline") == "copy")
        copy = &op;
    if (!prologue)
      fail("publication",
           "no if {pipeline = \"prologue\"} before the loop publishes its first tiles");
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

    check_uniform(loop, *prologue, *copy);
    check_slot_reuse(loop, carried, current);
    for (const Buffer& b : buffers) {
      check_copies(b, *prologue, *copy, current);
      check_fragment_bounds(b);
    }
    check_publication(loop, *prologue, *copy, buffers);
    return {"types",          "threadgroup capacity", "uniform control flow",
            "copy ownership", "fragment bounds",      "publication",
            "slot reuse"};
  }

  // The if {pipeline = "prologue"} in the loop's block, before it.
  const ir::Op* guard_before(const ir::Op& loop) const {
    const Place& place = places_.at(&loop);
    const ir::Op* found = nullptr;
    for (size_t i = 0; i < place.index; ++i) {
      const ir::Op& op = place.block->ops[i];
      if (op.kind == OpKind::If && op.has_attr("pipeline") && op.str_attr("pipeline") == "prologue")
        found = &op;
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

  void check_uniform(const ir::Op& loop, const ir::Op& prologue, const ir::Op& copy) {
    for (int i = 0; i < 3; ++i)
      if (varying(loop.operands[static_cast<size_t>(i)]))
        fail("uniform control flow", "the pipelined loop's bound " +
                                         name(loop.operands[static_cast<size_t>(i)]) +
                                         " differs between threads");
    for (const ir::Op* guard : {&prologue, &copy})
      if (varying(guard->operands[0]))
        fail("uniform control flow", "the " + guard->str_attr("pipeline") + " guard's condition " +
                                         name(guard->operands[0]) + " differs between threads");
  }

  // The loop starts at slot 0, the prologue's, and yields current ^ 1.
  void check_slot_reuse(const ir::Op& loop, size_t carried, ValueId current) {
    if (!is_constant(loop.operands[3 + carried], 0))
      fail("slot reuse", "the loop's current slot " + name(current) +
                             " does not start at slot 0, which the prologue fills");
    const ValueId next = loop.regions[0].ops.back().operands[carried];
    if (!is_free_slot(next, current))
      fail("slot reuse", "the loop yields " + name(next) + " for its current slot, not " +
                             name(current) + " ^ 1: the slots do not rotate");
  }

  bool is_free_slot(ValueId v, ValueId current) const {
    const ir::Op* def = definer(v);
    return def && def->kind == OpKind::Xor &&
           ((def->operands[0] == current && is_constant(def->operands[1], 1)) ||
            (def->operands[1] == current && is_constant(def->operands[0], 1)));
  }

  bool inside(const ir::Op& op, const ir::Op& region_owner) const {
    const std::vector<const ir::Op*>& e = places_.at(&op).enclosing;
    return std::find(e.begin(), e.end(), &region_owner) != e.end();
  }

  void check_copies(const Buffer& b, const ir::Op& prologue, const ir::Op& copy, ValueId current) {
    const std::string buffer = "pipeline buffer " + name(b.op->results[0]);
    std::vector<const Access*> first, next;
    for (const Access& a : b.stores) {
      if (inside(*a.op, prologue)) {
        if (a.slot != ir::kNoValue && !is_constant(a.slot, 0))
          fail("copy ownership",
               "the prologue stores into " + buffer + " at slot " + name(a.slot) + ", not slot 0");
        first.push_back(&a);
      } else if (inside(*a.op, copy)) {
        if (a.slot == current)
          fail("slot reuse",
               "the copy stores into the current slot of " + buffer + ", which the body reads");
        if (!is_free_slot(a.slot, current))
          fail("copy ownership", "the copy stores into " + buffer + " outside the free slot " +
                                     name(current) + " ^ 1");
        next.push_back(&a);
      } else {
        fail("copy ownership",
             "a store into " + buffer + " is neither in the prologue nor in the loop's copy");
      }
    }
    check_each_element_once(b, first, "the prologue");
    check_each_element_once(b, next, "the copy");
  }

  // Every thread's stores of one copy write each element of the slot exactly once.
  void check_each_element_once(const Buffer& b, const std::vector<const Access*>& stores,
                               const std::string& phase) {
    std::vector<int> writes(static_cast<size_t>(b.slot_elements), 0);
    for (int64_t t = 0; t < threads_; ++t) {
      ThreadValueMemo memo;
      for (const Access* a : stores) {
        if (a->op->operands.size() > 2) {
          const std::optional<int64_t> mask = value(a->op->operands[2], t, memo);
          if (!mask) fail("copy ownership", phase + "'s store mask is no function of the thread");
          if (!*mask) continue;
        }
        const std::optional<int64_t> e = element(*a, t, memo);
        if (!e || *e < 0 || *e >= b.slot_elements)
          fail("copy ownership", phase + " stores element " + (e ? std::to_string(*e) : "?") +
                                     " of a slot of " + std::to_string(b.slot_elements) +
                                     " elements of pipeline buffer " + name(b.op->results[0]) +
                                     " in thread " + std::to_string(t));
        ++writes[static_cast<size_t>(*e)];
      }
    }
    for (int64_t e = 0; e < b.slot_elements; ++e)
      if (writes[static_cast<size_t>(e)] != 1)
        fail("copy ownership", phase + " writes element " + std::to_string(e) +
                                   " of pipeline buffer " + name(b.op->results[0]) + " " +
                                   std::to_string(writes[static_cast<size_t>(e)]) +
                                   " times; each copy writes every element once");
  }

  // Each SIMD group's fragment (rows x columns) at (offset, stride) lies inside the slot.
  void check_fragment_bounds(const Buffer& b) {
    const int64_t groups = std::max<int64_t>(1, threads_ / target_.simd_width);
    for (const Access& a : b.fragment_loads)
      for (int64_t g = 0; g < groups; ++g) {
        ThreadValueMemo memo;
        const int64_t t = g * target_.simd_width;
        const std::optional<int64_t> start = element(a, t, memo);
        const std::optional<int64_t> stride = value(a.op->operands[2], t, memo);
        const std::vector<int64_t>& shape = k_.type(a.op->results[0]).shape;
        const int64_t rows = shape[0], columns = shape[1];
        if (!start || !stride || *start < 0 || *stride < columns ||
            *start + (rows - 1) * *stride + columns > b.slot_elements)
          fail("fragment bounds", "fragment load " + name(a.op->results[0]) + " of SIMD group " +
                                      std::to_string(g) + " reads past its slot of " +
                                      std::to_string(b.slot_elements) +
                                      " elements of pipeline buffer " + name(b.op->results[0]));
      }
  }

  void check_publication(const ir::Op& loop, const ir::Op& prologue, const ir::Op& copy,
                         const std::vector<Buffer>& buffers) {
    // The prologue: a barrier after its last store.
    const ir::Block& first = prologue.regions[0];
    size_t last_store = 0;
    bool stores = false;
    for (const Buffer& b : buffers)
      for (const Access& a : b.stores)
        if (inside(*a.op, prologue)) {
          last_store = std::max(last_store, top_index(*a.op, first));
          stores = true;
        }
    if (!stores || !barrier_after(first, last_store))
      fail("publication", "no barrier publishes the prologue's stores before the loop reads them");
    // The body: one barrier after the copy and the last fragment load.
    const ir::Block& body = loop.regions[0];
    size_t last = places_.at(&copy).index;
    for (const Buffer& b : buffers)
      for (const Access& a : b.fragment_loads) last = std::max(last, places_.at(a.op).index);
    if (!barrier_after(body, last))
      fail("publication",
           "no barrier after the copy and the fragment loads publishes the free slot and "
           "releases the current one before the slots rotate");
  }

  // The index in `block` of the op that is or encloses op.
  size_t top_index(const ir::Op& op, const ir::Block& block) const {
    const Place& place = places_.at(&op);
    if (place.block == &block) return place.index;
    for (const ir::Op* e : place.enclosing)
      if (places_.at(e).block == &block) return places_.at(e).index;
    throw InternalError("verify_software_pipeline: op outside the block");
  }

  static bool barrier_after(const ir::Block& block, size_t index) {
    for (size_t i = index + 1; i < block.ops.size(); ++i) {
      const ir::Op& op = block.ops[i];
      if (op.kind == OpKind::Barrier && op.str_attr("scope") == "threadgroup" &&
          (op.str_attr("mem") == "threadgroup" || op.str_attr("mem") == "all"))
        return true;
    }
    return false;
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
