#include "metile/lower/verify_scratch.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "metile/lower/thread_values.h"
#include "metile/lower/uniformity.h"

namespace metile::lower {

namespace {

using ir::OpKind;
using ir::ValueId;

struct Buffer {
  const ir::Op* op = nullptr;
  std::string kind;  // "" for shared_alloc
  int64_t begin = 0, end = 0;
  int64_t size = 0;
};

// One access or barrier, in program order, with the block it sits in.
struct Event {
  enum Kind { Store, Load, Barrier } kind;
  const ir::Op* op;
  const ir::Block* block;
  bool in_if;
  bool in_loop;
};

// The operand of a scratch access that is its pointer; -1 for an op that is no access.
// matrix_load and matrix_store move a whole fragment of one SIMD group; wgmma_mma reads b's
// whole tile (a too, unless a is in registers).
int pointer_operand(const ir::Op& op) {
  if (op.kind == OpKind::Load || op.kind == OpKind::Store || op.kind == OpKind::MatrixLoad ||
      op.kind == OpKind::AsyncCopy)
    return 0;
  if (op.kind == OpKind::WgmmaMma) return static_cast<int>(ir::wgmma_b_operand(op));
  return op.kind == OpKind::MatrixStore ? 1 : -1;
}

bool is_matrix_access(const ir::Op& op) {
  return op.kind == OpKind::MatrixLoad || op.kind == OpKind::MatrixStore;
}

[[noreturn]] void fail(const std::string& rule) {
  throw InternalError("verify_scratch: " + rule);
}

std::string name(ValueId v) {
  return "%" + std::to_string(v);
}

// Scratch pinned for a loop's lifetime: a software pipeline's slots or a prefetch ring's.
bool pinned(const std::string& kind) {
  return kind == "pipeline" || kind == "prefetch";
}

class Verifier {
 public:
  Verifier(const ir::Kernel& k, int simd_width)
      : k_(k), simd_width_(simd_width), uniform_(analyze_uniformity(k)) {
    auto it = k.attrs.find("threads_per_threadgroup");
    threads_ = it == k.attrs.end() ? 0 : std::get<int64_t>(it->second);
  }

  void run() {
    collect(k_.body, false, false);
    check_allocation();
    for (const auto& [v, buffer] : buffers_)
      if (!buffer.kind.empty()) check_buffer(v, buffer);
  }

 private:
  void collect(const ir::Block& block, bool in_if, bool in_loop) {
    for (const ir::Op& op : block.ops) {
      order_[&op] = static_cast<int64_t>(order_.size());
      if (op.kind == OpKind::ThreadgroupBuffer) add_buffer(op);
      if (op.kind == OpKind::PtrAdd && base_.count(op.operands[0]))
        base_[op.results[0]] = base_[op.operands[0]];
      for (ValueId v : op.operands) uses_[v].push_back(&op);
      if (op.kind == OpKind::Barrier)
        barriers_.push_back({Event::Barrier, &op, &block, in_if, in_loop});
      const int pointer = pointer_operand(op);
      if (pointer >= 0 && base_.count(op.operands[pointer]))
        events_[base_[op.operands[pointer]]].push_back({op.kind == OpKind::Store ||
                                                                op.kind == OpKind::MatrixStore ||
                                                                op.kind == OpKind::AsyncCopy
                                                            ? Event::Store
                                                            : Event::Load,
                                                        &op, &block, in_if, in_loop});
      for (const ir::Block& region : op.regions)
        // Every thread enters an if whose condition they share together, as a program's
        // scalar atomic under a Tile IR if does (its old value goes through an exchange);
        // a software pipeline's guards have uniform conditions (verify_software_pipeline).
        collect(region,
                in_if || (op.kind == OpKind::If && !op.has_attr("pipeline") &&
                          !uniform_[op.operands[0]]),
                in_loop || op.kind == OpKind::For || op.kind == OpKind::While);
      end_[&op] = static_cast<int64_t>(order_.size());  // past its regions' ops
    }
  }

  void add_buffer(const ir::Op& op) {
    Buffer b;
    b.op = &op;
    const auto it = op.attrs.find("scratch");
    if (it != op.attrs.end()) b.kind = std::get<std::string>(it->second);
    if (!b.kind.empty() && b.kind != "exchange" && b.kind != "reduction" &&
        b.kind != "private_reduction" && !pinned(b.kind) && b.kind != "simdgroup")
      fail("threadgroup_buffer " + name(op.results[0]) + " has scratch kind '" + b.kind +
           "', not exchange, reduction, private_reduction, pipeline, prefetch or simdgroup");
    b.size = op.int_attr("size");
    b.begin = op.int_attr("offset");
    b.end = b.begin + b.size * ir::dtype_bytes(k_.type(op.results[0]).dtype);
    buffers_[op.results[0]] = b;
    base_[op.results[0]] = op.results[0];
  }

  void check_allocation() {
    int64_t privates = 0;
    for (const auto& [v, a] : buffers_) {
      privates += a.kind == "private_reduction";
      for (const auto& [w, b] : buffers_) {
        if (v == w || a.kind.empty() || a.begin >= b.end || b.begin >= a.end) continue;
        if (pinned(a.kind) && (b.kind == "exchange" || b.kind == "reduction") && apart(v, w))
          continue;
        if (pinned(b.kind) && (a.kind == "exchange" || a.kind == "reduction") && apart(w, v))
          continue;
        // Two loops' slots, one after the other (the second pinned after the first's drain).
        if (pinned(a.kind) && pinned(b.kind) && apart(v, w) && apart(w, v)) continue;
        // Register reductions' slots, reused two reductions later: check_private_slots.
        if (a.kind == "private_reduction" && b.kind == "private_reduction") continue;
        if (b.kind.empty() || a.kind == "private_reduction" || b.kind == "private_reduction" ||
            pinned(a.kind) || pinned(b.kind) || a.kind == "simdgroup" || b.kind == "simdgroup")
          fail(a.kind + " scratch " + name(v) + " [" + std::to_string(a.begin) + ", " +
               std::to_string(a.end) + ") overlaps " +
               (b.kind.empty() ? "shared_alloc" : b.kind + " scratch") + " " + name(w) + " [" +
               std::to_string(b.begin) + ", " + std::to_string(b.end) + ")");
      }
    }
    check_private_slots();
    const auto it = k_.attrs.find("private_reductions");
    const int64_t recorded = it == k_.attrs.end() ? 0 : std::get<int64_t>(it->second);
    if (privates != recorded)
      fail("the kernel has " + std::to_string(privates) +
           " private_reduction buffers but records private_reductions = " +
           std::to_string(recorded));
  }

  // A pipeline's slots are live from its first access to the end of the outermost loop holding
  // one; scratch `other` may share their bytes when each of its accesses lies outside that
  // span with a threadgroup barrier between the two (the release of whichever came first).
  bool apart(ValueId pipeline, ValueId other) const {
    const auto p = events_.find(pipeline), o = events_.find(other);
    if (p == events_.end() || o == events_.end()) return true;
    int64_t first = INT64_MAX, last = 0;
    for (const Event& e : p->second) {
      first = std::min(first, order_.at(e.op));
      last = std::max(last, live_end(*e.op));
    }
    for (const Event& e : o->second) {
      const int64_t at = order_.at(e.op);
      if (at >= first && at < last) return false;
      if (!barrier_between(at < first ? live_end(*e.op) : last, at < first ? first : at))
        return false;
    }
    return true;
  }

  // Register reductions' buffers share slots (ThreadgroupAllocator::allocate_reduction_slot):
  // the buffers of a slot, in the order of their first accesses, each with a threadgroup barrier
  // after its last access and before the next one's first; slots do not overlap. In one pass
  // over each slot's buffers, as a kernel may have thousands.
  void check_private_slots() const {
    std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, ValueId>>> slots;
    for (const auto& [v, b] : buffers_)
      if (b.kind == "private_reduction") slots[{b.begin, b.end}].push_back({access_span(v)[0], v});
    int64_t end = 0;
    std::optional<ValueId> previous_slot;
    for (auto& [range, uses] : slots) {
      if (previous_slot && range.first < end) overlap_failure(*previous_slot, uses[0].second);
      end = std::max(end, range.second);
      previous_slot = uses[0].second;
      std::sort(uses.begin(), uses.end());
      for (size_t i = 1; i < uses.size(); ++i) {
        const int64_t last = access_span(uses[i - 1].second)[1], next = uses[i].first;
        if (!(last < next && barrier_between(last, next)))
          overlap_failure(uses[i - 1].second, uses[i].second);
      }
    }
  }

  // The program positions of a buffer's first and last accesses.
  std::array<int64_t, 2> access_span(ValueId v) const {
    std::array<int64_t, 2> span{INT64_MAX, INT64_MIN};
    const auto it = events_.find(v);
    if (it != events_.end())
      for (const Event& e : it->second) {
        span[0] = std::min(span[0], order_.at(e.op));
        span[1] = std::max(span[1], order_.at(e.op));
      }
    return span;
  }

  [[noreturn]] void overlap_failure(ValueId v, ValueId w) const {
    const Buffer &a = buffers_.at(v), &b = buffers_.at(w);
    fail(a.kind + " scratch " + name(v) + " [" + std::to_string(a.begin) + ", " +
         std::to_string(a.end) + ") overlaps " + b.kind + " scratch " + name(w) + " [" +
         std::to_string(b.begin) + ", " + std::to_string(b.end) + ")");
  }

  // Where an access stops being live: after the outermost loop around it, else after itself.
  int64_t live_end(const ir::Op& op) const {
    int64_t end = order_.at(&op) + 1;
    for (const auto& [loop, loop_end] : end_)
      if ((loop->kind == OpKind::For || loop->kind == OpKind::While) &&
          order_.at(loop) < order_.at(&op) && loop_end > end)
        end = std::max(end, loop_end);
    return end;
  }

  // barriers_ is in program order: the search starts at the first at or after `from`.
  bool barrier_between(int64_t from, int64_t to) const {
    auto b = std::lower_bound(barriers_.begin(), barriers_.end(), from,
                              [&](const Event& e, int64_t at) { return order_.at(e.op) < at; });
    for (; b != barriers_.end() && order_.at(b->op) < to; ++b)
      if (!b->in_if && b->op->str_attr("scope") == "threadgroup" &&
          (b->op->str_attr("mem") == "threadgroup" || b->op->str_attr("mem") == "all"))
        return true;
    return false;
  }

  void check_buffer(ValueId v, const Buffer& b) {
    check_pointer_uses(v, v);
    // A software pipeline's slots follow its own sequence (verify_software_pipeline), a
    // prefetch ring's the step's barrier (staged_prefetch.cc); each SIMD group's slice of
    // simdgroup scratch is ordered by SIMD-group barriers (device_dot_operands.cc).
    if (pinned(b.kind) || b.kind == "simdgroup") return;
    // Shared reduction scratch may sit in an if: lowering admits a reduction there only when
    // the condition is uniform (lower_control_flow.cc), which Metal IR does not record.
    for (const Event& e : events_[v])
      if (e.in_if && b.kind != "reduction")
        fail(b.kind + " scratch " + name(v) +
             " is accessed inside an if; every thread must take "
             "part in an exchange or reduction, with unconditional barriers");
    const std::vector<Event> events = ordered_events(v);
    if (events.empty()) return;
    check_sequence(v, b, events);
    check_geometry(v, b, events);
  }

  // Only ptr_add (as the base), load, store, async_copy, matrix_load and matrix_store (as the
  // pointer) may use a scratch pointer, and wgmma_mma a pipeline's.
  void check_pointer_uses(ValueId buffer, ValueId p) {
    for (const ir::Op* use : uses_[p]) {
      const int pointer = pointer_operand(*use);
      if (use->kind == OpKind::PtrAdd && use->operands[0] == p) {
        check_pointer_uses(buffer, use->results[0]);
      } else if (use->kind == OpKind::WgmmaMma && pinned(buffers_.at(buffer).kind)) {
        // A software pipeline's or prefetch ring's slots may be read by wgmma.
      } else if (!(pointer >= 0 && use->operands[pointer] == p &&
                   std::count(use->operands.begin(), use->operands.end(), p) == 1)) {
        fail("the scratch pointer " + name(p) + " of " + name(buffer) + " is used by " +
             std::string(ir::op_name(use->kind)) +
             "; scratch may only be offset by ptr_add and accessed by load, store, "
             "async_copy, matrix_load and matrix_store");
      }
    }
  }

  // The buffer's accesses and the threadgroup barriers of their blocks, in program order.
  std::vector<Event> ordered_events(ValueId v) {
    std::vector<Event> all = events_[v];
    if (all.empty()) return all;
    std::set<const ir::Block*> blocks;
    for (const Event& e : all) blocks.insert(e.block);
    // The sequence needs the barriers from the first access to the first one after the last (a
    // kernel of thousands of reductions has thousands of barriers; the rest change nothing).
    const std::array<int64_t, 2> span = access_span(v);
    auto b = std::lower_bound(barriers_.begin(), barriers_.end(), span[0],
                              [&](const Event& e, int64_t at) { return order_.at(e.op) < at; });
    for (; b != barriers_.end(); ++b)
      if (blocks.count(b->block) && b->op->str_attr("scope") == "threadgroup" &&
          (b->op->str_attr("mem") == "threadgroup" || b->op->str_attr("mem") == "all")) {
        all.push_back(*b);
        if (order_.at(b->op) > span[1]) break;
      }
    // Ops of one block are stored contiguously, so their addresses give program order.
    std::stable_sort(all.begin(), all.end(),
                     [](const Event& a, const Event& b) { return a.op < b.op; });
    if (blocks.size() != 1)
      fail("scratch " + name(v) +
           " is accessed from several blocks; an exchange or reduction "
           "runs in one");
    return all;
  }

  void check_sequence(ValueId v, const Buffer& b, const std::vector<Event>& events) {
    const bool is_private = b.kind == "private_reduction";
    if (is_private && events[0].in_loop)
      fail("private reduction scratch " + name(v) +
           " is inside a loop, so it would be written again after its publication");
    enum Phase { Idle, Storing, Published, Loading } phase = Idle;
    bool released = false;
    for (const Event& e : events) {
      switch (e.kind) {
        case Event::Store:
          if (phase == Published || phase == Loading)
            fail(is_private
                     ? "private reduction scratch " + name(v) + " is written after its publication"
                     : b.kind + " scratch " + name(v) +
                           " is written again before a release barrier");
          if (is_private && released)
            fail("private reduction scratch " + name(v) + " is written after its publication");
          phase = Storing;
          break;
        case Event::Load:
          if (phase == Idle || phase == Storing)
            fail(b.kind + " scratch " + name(v) +
                 " is read before a barrier publishes what was stored");
          phase = Loading;
          break;
        case Event::Barrier:
          if (phase == Storing) phase = Published;
          if (phase == Loading) {
            phase = Idle;
            released = true;
          }
          break;
      }
    }
    if (phase == Storing || phase == Published)
      fail(b.kind + " scratch " + name(v) + " is stored but never read");
    if (phase == Loading && !is_private)
      fail(b.kind + " scratch " + name(v) +
           " is not released by a barrier after its reads; a later use could overwrite it");
  }

  // The integer value of v in thread t, when it is a compile-time function of the thread.
  std::optional<int64_t> value(ValueId v, int64_t t, ThreadValueMemo& memo) {
    return thread_value(
        k_, [this](ValueId x) { return definer(x); }, simd_width_, v, t, memo);
  }

  // The element offset of an access from its scratch buffer in thread t.
  int64_t offset(ValueId p, ValueId buffer, int64_t t, ThreadValueMemo& memo) {
    if (p == buffer) return 0;
    const ir::Op* def = definer(p);
    const std::optional<int64_t> step = value(def->operands[1], t, memo);
    if (!step)
      fail("an address in scratch " + name(buffer) + " depends on " + name(def->operands[1]) +
           ", which is not a compile-time function of the thread index");
    return offset(def->operands[0], buffer, t, memo) + *step;
  }

  void check_geometry(ValueId v, const Buffer& b, const std::vector<Event>& events) {
    const int64_t groups = (threads_ + simd_width_ - 1) / simd_width_;
    if (b.kind != "exchange" && b.size != groups)
      fail(b.kind + " scratch " + name(v) + " holds " + std::to_string(b.size) + " partials for " +
           std::to_string(groups) + " SIMD groups");
    // Per round (stores, publication, loads), each element is published once and only
    // published elements are read.
    std::map<int64_t, int64_t> writer;  // element -> thread
    bool after_loads = false;
    for (const Event& e : events) {
      if (e.kind == Event::Barrier) continue;
      if (e.kind == Event::Store && after_loads) writer.clear();
      after_loads = e.kind == Event::Load;
      if (is_matrix_access(*e.op)) {
        check_fragment(v, b, e, writer);
        continue;
      }
      // wgmma reads the staged tile whole, after the barrier that publishes it (the sequence).
      if (e.op->kind == OpKind::WgmmaMma) continue;
      const size_t mask_operand = e.kind == Event::Store ? 2 : 1;
      for (int64_t t = 0; t < threads_; ++t) {
        ThreadValueMemo memo;
        // An async_copy's third operand chooses zeros over the source: it writes either way.
        if (e.op->operands.size() == 3 && e.op->kind != OpKind::AsyncCopy) {
          const ValueId m = e.op->operands[mask_operand];
          const std::optional<int64_t> mask = value(m, t, memo);
          if (!mask)
            fail("an access to scratch " + name(v) + " is masked by " + name(m) +
                 ", which is not a compile-time function of the thread index");
          if (!*mask) continue;
        }
        const int64_t first = offset(e.op->operands[0], v, t, memo);
        const int64_t elements =
            e.op->kind == OpKind::AsyncCopy ? e.op->int_attr_or("elements", 1) : 1;
        for (int64_t at = first; at < first + elements; ++at) {
          if (at < 0 || at >= b.size)
            fail("thread " + std::to_string(t) + " accesses element " + std::to_string(at) +
                 " of scratch " + name(v) + ", which holds " + std::to_string(b.size));
          if (e.kind == Event::Store) {
            if (const auto it = writer.find(at); it != writer.end())
              fail("element " + std::to_string(at) + " of scratch " + name(v) +
                   " is published twice, by threads " + std::to_string(it->second) + " and " +
                   std::to_string(t));
            writer[at] = t;
          } else if (!writer.count(at)) {
            fail("thread " + std::to_string(t) + " reads element " + std::to_string(at) +
                 " of scratch " + name(v) + ", which no thread published");
          }
        }
      }
    }
  }

  // A matrix_load or matrix_store: per SIMD group (its pointer, offset and stride the same in
  // every lane), the fragment's elements offset + r * stride + c (c * stride + r transposed), all
  // in the buffer; a store publishes them for its group, a load reads only published ones.
  void check_fragment(ValueId v, const Buffer& b, const Event& e,
                      std::map<int64_t, int64_t>& writer) {
    const bool store = e.op->kind == OpKind::MatrixStore;
    const size_t first = store ? 1 : 0;
    const bool transpose = e.op->int_attr_or("transpose", 0) != 0;
    for (int64_t group = 0; group * simd_width_ < threads_; ++group) {
      std::optional<std::array<int64_t, 3>> lane0;
      for (int64_t t = group * simd_width_; t < std::min(threads_, (group + 1) * simd_width_);
           ++t) {
        ThreadValueMemo memo;
        const std::optional<int64_t> offset = value(e.op->operands[first + 1], t, memo),
                                     stride = value(e.op->operands[first + 2], t, memo);
        if (!offset || !stride)
          fail("a fragment access to scratch " + name(v) +
               " has an offset or stride that is not a compile-time function of the thread "
               "index");
        const std::array<int64_t, 3> at = {this->offset(e.op->operands[first], v, t, memo), *offset,
                                           *stride};
        if (lane0 && *lane0 != at)
          fail("a fragment access to scratch " + name(v) +
               " differs between the lanes of SIMD "
               "group " +
               std::to_string(group));
        lane0 = at;
      }
      const auto [base, offset, stride] = *lane0;
      const ir::Type& fragment = k_.type(store ? e.op->operands[0] : e.op->results[0]);
      for (int64_t r = 0; r < fragment.shape[0]; ++r)
        for (int64_t c = 0; c < fragment.shape[1]; ++c) {
          const int64_t at = base + offset + (transpose ? c * stride + r : r * stride + c);
          if (at < 0 || at >= b.size)
            fail("SIMD group " + std::to_string(group) + " accesses element " + std::to_string(at) +
                 " of scratch " + name(v) + ", which holds " + std::to_string(b.size));
          if (!store && !writer.count(at))
            fail("SIMD group " + std::to_string(group) + " reads element " + std::to_string(at) +
                 " of scratch " + name(v) + ", which no thread published");
          if (store && writer.count(at))
            fail("element " + std::to_string(at) + " of scratch " + name(v) +
                 " is published twice");
          if (store) writer[at] = group * simd_width_;
        }
    }
  }

  const ir::Op* definer(ValueId v) {
    if (definers_.empty())
      ir::walk(k_.body, [&](const ir::Op& op) {
        for (ValueId r : op.results) definers_[r] = &op;
      });
    const auto it = definers_.find(v);
    return it == definers_.end() ? nullptr : it->second;
  }

  const ir::Kernel& k_;
  const int simd_width_;
  const std::vector<bool> uniform_;  // by value: the same in every thread
  int64_t threads_ = 0;
  std::map<ValueId, Buffer> buffers_;
  std::map<ValueId, ValueId> base_;  // pointer -> the threadgroup_buffer it offsets
  std::map<ValueId, std::vector<const ir::Op*>> uses_;
  std::map<ValueId, std::vector<Event>> events_;
  std::map<const ir::Op*, int64_t> order_, end_;  // preorder position; past its regions
  std::vector<Event> barriers_;
  std::map<ValueId, const ir::Op*> definers_;
};

}  // namespace

void verify_scratch(const ir::Kernel& metal, int simd_width) {
  if (metal.dialect != ir::Dialect::Metal)
    throw UserError("verify_scratch: kernel '" + metal.name + "' is not Metal IR");
  Verifier(metal, simd_width).run();
}

}  // namespace metile::lower
