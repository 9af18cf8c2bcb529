#include "metile/codegen/host/workgroup_emitter.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "metile/codegen/c_emitter.h"
#include "metile/codegen/entry_wrapper.h"
#include "metile/lower/uniformity.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

using K = ir::OpKind;

constexpr unsigned kSimdWidth = 32;
// Per-thread arrays live on the worker's stack (8 MiB); a kernel needing more runs on fibers.
constexpr int64_t kMaxArrayBytes = int64_t{2} << 20;
// The host compiler spends milliseconds on each thread loop, and more per loop the more loops
// one function holds (a straight-line chain of 1,000 reductions: 75 s, against 4 s on
// fibers; benchmarks/compile_scaling.py); a kernel needing more loops runs on fibers.
constexpr int kMaxThreadLoops = 256;

bool is_collective(const ir::Op& op) {
  return ir::op_info(op.kind).rule == ir::TypeRule::SimdCollective;
}

// Ops at which threads wait for each other.
bool is_rendezvous(const ir::Op& op) {
  return op.kind == K::Barrier || is_collective(op);
}

// The index of a collective in DialectTable::collectives (dialect.h's order).
size_t collective_index(K kind) {
  static constexpr K kOrder[] = {K::SimdSum,        K::SimdMax,        K::SimdMin,
                                 K::SimdShuffle,    K::SimdShuffleXor, K::SimdBroadcast,
                                 K::SimdShuffleDown};
  const auto it = std::find(std::begin(kOrder), std::end(kOrder), kind);
  if (it == std::end(kOrder))
    throw InternalError("work-group emitter: " + std::string(ir::op_name(kind)) +
                        " is not a SIMD collective");
  return static_cast<size_t>(it - std::begin(kOrder));
}

bool contains_rendezvous(const ir::Op& op) {
  bool found = false;
  for (const ir::Block& region : op.regions)
    ir::walk(region, [&](const ir::Op& inner) { found = found || is_rendezvous(inner); });
  return found;
}

std::string at_line(const ir::Op& op) {
  return op.loc.known() ? " at " + op.loc.str() : "";
}

// Why the kernel cannot run as a work-group function, or "".
std::string ineligibility(const ir::Kernel& k, const std::vector<bool>& uniform) {
  std::string reason;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (reason.empty() && ir::op_info(op.kind).has(ir::Trait::Convergent) && !is_rendezvous(op))
      reason = std::string(ir::op_name(op.kind)) + at_line(op) +
               " is a convergent op that the work-group path does not emulate";
  });
  if (!reason.empty()) return reason;
  auto check_block = [&](const ir::Block& block, auto& self) -> void {
    for (const ir::Op& op : block.ops) {
      if (!reason.empty()) return;
      if (op.regions.empty() || !contains_rendezvous(op)) continue;
      if (op.kind == K::While) {
        reason = "a barrier or SIMD collective sits in the while" + at_line(op) +
                 ", whose trip count is known only as it runs";
        return;
      }
      const size_t controls = op.kind == K::For ? 3 : 1;
      for (size_t i = 0; i < controls; ++i)
        if (!uniform[op.operands[i]]) {
          reason = std::string("a barrier or SIMD collective sits in the ") +
                   std::string(ir::op_name(op.kind)) + at_line(op) + ", whose " +
                   (op.kind == K::For ? "bounds" : "condition") +
                   " may differ between the threads of a threadgroup";
          return;
        }
      for (const ir::Block& region : op.regions) self(region, self);
    }
  };
  check_block(k.body, check_block);
  return reason;
}

int64_t value_bytes(const ir::Type& t) {
  if (t.pointer) return 8;
  const int64_t width = t.is_vector() ? t.shape.at(0) : 1;
  return ir::dtype_bytes(t.dtype) * (width == 3 ? 4 : width);  // a float3 is 16 bytes
}

// A block cut into the steps of a work-group function: runs of ops that need no other thread
// (one thread loop each) and the rendezvous ops and control flow between them.
struct Step {
  std::vector<const ir::Op*> run;      // a run of thread-local ops, or
  const ir::Op* rendezvous = nullptr;  // a barrier, a collective, a for/if containing them, or
                                       // a for with uniform bounds
};

// A for whose bounds all threads share runs outside the thread loops even without a
// rendezvous in it: the loop over the threads is then the innermost one, straight-line code
// the host compiler vectorises (a thread's own loop inside it would keep it scalar).
bool is_uniform_for(const ir::Op& op, const std::vector<bool>& uniform) {
  return op.kind == K::For && uniform[op.operands[0]] && uniform[op.operands[1]] &&
         uniform[op.operands[2]];
}

std::vector<Step> steps_of(const ir::Block& block, const std::vector<bool>& uniform) {
  std::vector<Step> steps;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    const ir::Op& op = block.ops[i];
    if (op.kind == K::Yield && i + 1 == block.ops.size()) break;
    if (is_rendezvous(op) || contains_rendezvous(op) || is_uniform_for(op, uniform)) {
      steps.push_back({{}, &op});
    } else {
      if (steps.empty() || steps.back().rendezvous) steps.emplace_back();
      steps.back().run.push_back(&op);
    }
  }
  return steps;
}

// Where each value lives in the work-group function.
enum class Storage : uint8_t {
  Scalar,  // one C variable for the threadgroup: parameters, uniform ops, loop counters
  Local,   // a C variable inside one thread loop
  Array,   // one element per thread, read and written at [thread]
};

class WorkgroupEmitter : public CEmitter {
 public:
  WorkgroupEmitter(const ir::Kernel& k, const CDialect& d, const target::Target& t,
                   const KernelABI& abi, std::vector<bool> uniform)
      : CEmitter(k, d, t),
        abi_(abi),
        threads_(abi.threads_total()),
        uniform_(std::move(uniform)),
        storage_(k.types.size(), Storage::Scalar),
        defined_in_(k.types.size(), -1) {
    report_thread_ = "0u";  // outside the thread loops every thread does the same
  }

  // Plans storage; returns why the function would be too large to build, or "".
  std::string plan() {
    segments_ = 0;
    thread_loops_ = 0;
    plan_block(kernel_.body);
    if (thread_loops_ > kMaxThreadLoops)
      return "it would need " + std::to_string(thread_loops_) + " thread loops, more than the " +
             std::to_string(kMaxThreadLoops) + " the host compiler builds in reasonable time";
    for (size_t v = 0; v < storage_.size(); ++v)
      if (storage_[v] == Storage::Local && escapes_.count(ir::ValueId(v)))
        storage_[v] = Storage::Array;
    int64_t bytes = 0;
    for (size_t v = 0; v < storage_.size(); ++v)
      if (storage_[v] == Storage::Array) bytes += threads_ * value_bytes(type(ir::ValueId(v)));
    if (bytes > kMaxArrayBytes)
      return "its per-thread values need more than " + std::to_string(kMaxArrayBytes >> 20) +
             " MiB of arrays";
    return "";
  }

  std::string statements() {
    out_.clear();
    indent_ = 1;
    lines_ = 0;
    source_lines_.clear();
    segments_ = 0;
    const auto& g = dialect_.table().geometry;
    const auto& tpt = abi_.threads_per_threadgroup;
    line("const uint3 " + std::string(g[3].name) + " = uint3(" + std::to_string(tpt[0]) + "u, " +
         std::to_string(tpt[1]) + "u, " + std::to_string(tpt[2]) + "u);");
    declare_extents();
    emit_steps(kernel_.body);
    return out_;
  }

 private:
  // ---- planning: the same walk as emission, counting thread loops (segments) ----
  void use(ir::ValueId v, int segment) {
    if (defined_in_[v] >= 0 && defined_in_[v] != segment) {
      escapes_.insert(v);
      reads_[segment].insert(v);
    }
  }
  void define(ir::ValueId v, int segment, Storage s) {
    defined_in_[v] = segment;
    storage_[v] = s;
  }

  // A uniform op computed once, before the thread loop. A load qualifies only before any
  // write of its run: every thread would read the same bytes, which no other thread of a
  // race-free kernel writes until the next barrier.
  bool hoistable(const ir::Op& op, bool after_a_write) const {
    const ir::OpInfo& info = ir::op_info(op.kind);
    const bool uniform_load = op.kind == K::Load && !after_a_write;
    if (!op.regions.empty() || !(info.has(ir::Trait::Pure) || uniform_load) ||
        info.has(ir::Trait::Varying) || op.results.size() != 1 || !uniform_[op.results[0]])
      return false;
    return std::all_of(op.operands.begin(), op.operands.end(),
                       [&](ir::ValueId v) { return storage_[v] == Storage::Scalar; });
  }

  static bool writes_memory(const ir::Op& op) {
    bool writes = ir::op_info(op.kind).has(ir::Trait::WritesMemory);
    for (const ir::Block& region : op.regions)
      ir::walk(region, [&](const ir::Op& inner) {
        writes = writes || ir::op_info(inner.kind).has(ir::Trait::WritesMemory);
      });
    return writes;
  }

  void plan_block(const ir::Block& block) {
    for (const Step& step : steps_of(block, uniform_)) {
      const int segment = segments_++;
      if (!step.rendezvous) {
        ++thread_loops_;  // one, or three where guards split it: counted as one
        bool after_a_write = false;
        for (const ir::Op* op : step.run) {
          if (hoistable(*op, after_a_write)) {
            hoisted_.insert(op);
            continue;
          }
          after_a_write = after_a_write || writes_memory(*op);
          for (ir::ValueId v : op->operands) use(v, segment);
          for (const ir::Block& region : op->regions)
            ir::walk(region, [&](const ir::Op& inner) {
              for (ir::ValueId v : inner.operands) use(v, segment);
            });
          for (ir::ValueId r : op->results) define(r, segment, Storage::Local);
        }
        continue;
      }
      const ir::Op& op = *step.rendezvous;
      thread_loops_ += is_collective(op) || !op.regions.empty();  // lanes, or carried values
      for (ir::ValueId v : op.operands) use(v, segment);
      for (ir::ValueId r : op.results) define(r, segment, Storage::Array);
      if (op.kind == K::For)
        for (size_t i = 1; i < op.regions[0].args.size(); ++i)
          define(op.regions[0].args[i], segment, Storage::Array);
      for (const ir::Block& region : op.regions) {
        plan_block(region);
        const int yield_segment = segments_++;
        if (!region.ops.empty() && region.ops.back().kind == K::Yield)
          for (ir::ValueId v : region.ops.back().operands) use(v, yield_segment);
      }
    }
  }

  // ---- emission ----
  std::string array(ir::ValueId v) const { return "metile_wg_" + name(v); }
  // v as the current thread (metile_t) sees it.
  std::string per_thread(ir::ValueId v, const std::string& thread = "metile_tid") const {
    return storage_[v] == Storage::Array ? array(v) + "[" + thread + "]" : name(v);
  }
  // A uniform value: every thread holds the same, so thread 0's stands for all.
  std::string uniform_value(ir::ValueId v) const {
    return storage_[v] == Storage::Array ? array(v) + "[0]" : name(v);
  }
  std::string declared(ir::ValueId v) const {
    return (type(v).pointer ? "" : "const ") + type_of(v) + " ";
  }
  void declare_array(ir::ValueId v) {
    line(type_of(v) + " " + array(v) + "[" + std::to_string(threads_) + "];");
  }

  void open_thread_loop() {
    const auto& g = dialect_.table().geometry;
    const auto& tpt = abi_.threads_per_threadgroup;
    // The threads of a barrier-free region are independent in a race-free kernel (the GPU
    // runs them at once), so the loop over them carries no dependence through memory.
    line("#pragma GCC ivdep");
    line("for (uint metile_tid = 0; metile_tid < " + std::to_string(threads_) +
         "u; ++metile_tid) {");
    ++indent_;
    const std::string x = std::to_string(tpt[0]) + "u", xy = std::to_string(tpt[0] * tpt[1]) + "u";
    line("const uint3 " + std::string(g[2].name) +
         (tpt[1] == 1 && tpt[2] == 1
              ? " = uint3(metile_tid, 0u, 0u);"
              : " = uint3(metile_tid % " + x + ", metile_tid / " + x + " % " +
                    std::to_string(tpt[1]) + "u, metile_tid / " + xy + ");"));
    line("const uint " + std::string(g[4].name) + " = metile_tid % 32u;");
    line("const uint " + std::string(g[5].name) + " = metile_tid / 32u;");
    report_thread_ = "metile_tid";
  }
  void close_loop() {
    --indent_;
    line("}");
    report_thread_ = "0u";
  }

  void emit_steps(const ir::Block& block) {
    for (const Step& step : steps_of(block, uniform_)) {
      const int segment = segments_++;
      if (step.rendezvous) {
        emit_rendezvous(*step.rendezvous);
        continue;
      }
      std::vector<const ir::Op*> looped;
      for (const ir::Op* op : step.run) {
        if (hoisted_.count(op))
          emit_op(*op);
        else
          looped.push_back(op);
      }
      if (looped.empty()) continue;
      for (const ir::Op* op : looped)
        for (ir::ValueId r : op->results)
          if (storage_[r] == Storage::Array) declare_array(r);
      const Guards guards = guards_of(looped);
      if (guards.values.empty() && guards.accesses.empty()) {
        emit_thread_loop(looped, segment, {});
        continue;
      }
      // Where every guard holds for every thread (a tile wholly in bounds), the loop runs
      // with them as constants: masked accesses become plain ones, the grouped-access branch
      // its vector side, and the loop vectorises without gathers and scatters. The same first
      // loop checks every access it can compute against its buffer's extent, so that the
      // loop run with the guards as constants needs no bounds check of its own.
      const std::string unmasked = "metile_unmasked" + std::to_string(segment);
      line("int " + unmasked + " = 1;");  // an int: GCC vectorises no reduction over a bool
      open_thread_loop();
      emit_reads(segment);
      for (const ir::Op* op : looped)
        if (guards.slice.count(op)) emit_op(*op);
      std::string all;
      for (ir::ValueId g : guards.values) all += (all.empty() ? "" : " & ") + name(g);
      for (const ir::Op* op : guards.accesses)
        for (const Access& a : accesses_of(*op)) all += (all.empty() ? "" : " & ") + in_bounds(a);
      line(unmasked + " &= int(" + all + ");");  // & rather than &&: no branch in the loop
      close_loop();
      line("if (" + unmasked + ") {");
      ++indent_;
      proven_in_bounds_.insert(guards.accesses.begin(), guards.accesses.end());
      emit_thread_loop(looped, segment, guards.values);
      proven_in_bounds_.clear();
      --indent_;
      line("} else {");
      ++indent_;
      emit_thread_loop(looped, segment, {});
      --indent_;
      line("}");
    }
  }

  // The masks of a thread loop's masked loads and stores and the conditions of its ifs that
  // the loop's own pure ops compute (from the thread's coordinates and uniform values), and
  // those ops (a loop computing only them tells whether all hold).
  // With them the accesses (at the loop's top level) whose addresses those ops compute too.
  struct Guards {
    std::set<ir::ValueId> values;
    std::set<const ir::Op*> slice;
    std::set<const ir::Op*> accesses;
  };
  Guards guards_of(const std::vector<const ir::Op*>& looped) const {
    std::map<ir::ValueId, const ir::Op*> defined_by;
    for (const ir::Op* op : looped)
      for (ir::ValueId r : op->results) defined_by[r] = op;
    std::set<ir::ValueId> candidates;
    auto visit = [&](const ir::Op& op) {
      if (op.kind == K::Load && op.operands.size() == 3) candidates.insert(op.operands[1]);
      if (op.kind == K::Store && op.operands.size() == 3) candidates.insert(op.operands[2]);
      if (op.kind == K::If) candidates.insert(op.operands[0]);
    };
    for (const ir::Op* top : looped) {
      visit(*top);
      for (const ir::Block& region : top->regions) ir::walk(region, visit);
    }
    // The loop's ops computing v, or nullopt when one of them is not pure.
    auto slice_of = [&](ir::ValueId v0) -> std::optional<std::set<const ir::Op*>> {
      std::set<const ir::Op*> slice;
      std::vector<ir::ValueId> pending{v0};
      while (!pending.empty()) {
        const ir::ValueId v = pending.back();
        pending.pop_back();
        const auto it = defined_by.find(v);
        if (it == defined_by.end() || !slice.insert(it->second).second) continue;
        const ir::Op& op = *it->second;
        if (!op.regions.empty() || !ir::op_info(op.kind).has(ir::Trait::Pure)) return std::nullopt;
        pending.insert(pending.end(), op.operands.begin(), op.operands.end());
      }
      return slice;
    };
    Guards guards;
    for (ir::ValueId g : candidates) {
      const ir::Type& t = type(g);
      if (!defined_by.count(g) || t.dtype != ir::DType::i1 || t.pointer || t.is_vector()) continue;
      const auto slice = slice_of(g);
      if (!slice) continue;
      guards.values.insert(g);
      guards.slice.insert(slice->begin(), slice->end());
    }
    for (const ir::Op* op : looped) {
      const std::vector<Access> accesses = accesses_of(*op);
      if (accesses.empty()) continue;
      std::set<const ir::Op*> slices;
      bool covered = true;
      for (const Access& a : accesses) {
        const auto slice = slice_of(a.ptr);
        covered = covered && slice && a.offset.empty() && !in_bounds(a).empty();
        if (covered) slices.insert(slice->begin(), slice->end());
      }
      if (!covered) continue;
      guards.accesses.insert(op);
      guards.slice.insert(slices.begin(), slices.end());
    }
    return guards;
  }

  void emit_reads(int segment) {
    for (ir::ValueId v : reads_[segment])
      line(declared(v) + name(v) + " = " + array(v) + "[metile_tid];");
  }

  // One loop over the threads running `looped`, with the values in `known_true` as true.
  void emit_thread_loop(const std::vector<const ir::Op*>& looped, int segment,
                        const std::set<ir::ValueId>& known_true) {
    open_thread_loop();
    emit_reads(segment);
    for (const ir::Op* op : looped) {
      if (op->results.size() == 1 && known_true.count(op->results[0]))
        line("const bool " + name(op->results[0]) + " = true;");
      else
        emit_op(*op);
      for (ir::ValueId r : op->results)
        if (storage_[r] == Storage::Array) line(array(r) + "[metile_tid] = " + name(r) + ";");
    }
    close_loop();
  }

  void emit_rendezvous(const ir::Op& op) {
    const ir::Op* parent = std::exchange(current_, &op);
    if (op.kind == K::Barrier)
      line("// " + op.str_attr("scope") + " barrier: the thread loops end and begin here");
    else if (op.kind == K::For)
      emit_uniform_for(op);
    else if (op.kind == K::If)
      emit_uniform_if(op);
    else
      emit_collective(op);
    current_ = parent;
  }

  // Copies each yielded value into its target array; all reads come before any write where a
  // yield passes one carried value to another, and a value yielded to itself is not copied.
  void copy_yields(const ir::Block& region, const std::vector<ir::ValueId>& targets) {
    ++segments_;
    if (targets.empty()) return;
    const ir::Op& yield = region.ops.back();
    bool crossed = false, copies = false;
    for (size_t i = 0; i < targets.size(); ++i) {
      copies = copies || yield.operands[i] != targets[i];
      for (size_t j = 0; j < targets.size(); ++j)
        crossed = crossed || (i != j && yield.operands[i] == targets[j]);
    }
    if (!copies) return;
    open_thread_loop();
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!crossed && yield.operands[i] != targets[i])
        line(array(targets[i]) + "[metile_tid] = " + per_thread(yield.operands[i]) + ";");
      else if (crossed)
        line(declared(targets[i]) + "metile_next" + std::to_string(i) + " = " +
             per_thread(yield.operands[i]) + ";");
    }
    if (crossed)
      for (size_t i = 0; i < targets.size(); ++i)
        line(array(targets[i]) + "[metile_tid] = metile_next" + std::to_string(i) + ";");
    close_loop();
  }

  void emit_uniform_for(const ir::Op& op) {
    const ir::Block& body = op.regions.at(0);
    const ir::ValueId iv = body.args[0];
    std::vector<ir::ValueId> carried(body.args.begin() + 1, body.args.end());
    for (ir::ValueId a : carried) declare_array(a);
    if (!carried.empty()) {
      open_thread_loop();
      for (size_t i = 0; i < carried.size(); ++i)
        line(array(carried[i]) + "[metile_tid] = " + per_thread(op.operands[3 + i]) + ";");
      close_loop();
    }
    const ir::ValueId step = op.operands[2];
    if (!positive_constants_.count(step))
      line("if (" + uniform_value(step) + " <= 0) " + std::string(dialect_.table().trap_statement));
    line("for (" + type_of(iv) + " " + name(iv) + " = " + uniform_value(op.operands[0]) + "; " +
         name(iv) + " < " + uniform_value(op.operands[1]) + "; " + name(iv) +
         " += " + uniform_value(step) + ") {");
    ++indent_;
    emit_steps(body);
    current_ = nullptr;
    copy_yields(body, carried);
    current_ = &op;
    close_loop();
    for (size_t i = 0; i < op.results.size(); ++i)
      line("auto& " + array(op.results[i]) + " = " + array(carried[i]) + ";");
  }

  void emit_uniform_if(const ir::Op& op) {
    for (ir::ValueId r : op.results) declare_array(r);
    line("if (" + uniform_value(op.operands[0]) + ") {");
    for (size_t i = 0; i < op.regions.size(); ++i) {
      if (i == 1) line("} else {");
      ++indent_;
      emit_steps(op.regions[i]);
      current_ = nullptr;
      copy_yields(op.regions[i], op.results);
      current_ = &op;
      --indent_;
    }
    line("}");
  }

  // One loop over the SIMD groups: lanes combine in lane order, as on fibers (simd.h).
  void emit_collective(const ir::Op& op) {
    const ir::ValueId r = op.results[0], x = op.operands[0];
    declare_array(r);
    const std::string n = std::to_string(threads_) + "u";
    line("for (uint metile_base = 0; metile_base < " + n + "; metile_base += 32u) {");
    ++indent_;
    line("const uint metile_lanes = metile_base + 32u <= " + n + " ? 32u : " + n +
         " - metile_base;");
    const ir::DType route = dialect_.collective_dtype(type(r).dtype);
    const std::string t = type_of(r),
                      acc = route == type(r).dtype ? t : std::string(dialect_.scalar_type(route));
    auto lane_value = [&](const std::string& index) {
      return acc + "(" + per_thread(x, index) + ")";
    };
    if (op.kind == K::SimdSum || op.kind == K::SimdMax || op.kind == K::SimdMin) {
      const std::string next = lane_value("metile_base + metile_l");
      const std::string combine = op.kind == K::SimdSum   ? acc + "(metile_acc + " + next + ")"
                                  : op.kind == K::SimdMax ? "max(metile_acc, " + next + ")"
                                                          : "min(metile_acc, " + next + ")";
      line(acc + " metile_acc = " + lane_value("metile_base") + ";");
      line("for (uint metile_l = 1; metile_l < metile_lanes; ++metile_l) metile_acc = " + combine +
           ";");
      line("for (uint metile_l = 0; metile_l < metile_lanes; ++metile_l) " + array(r) +
           "[metile_base + metile_l] = " + t + "(metile_acc);");
    } else {
      emit_shuffle(op);
    }
    close_loop();
  }

  void emit_shuffle(const ir::Op& op) {
    const ir::ValueId r = op.results[0], x = op.operands[0];
    line("for (uint metile_l = 0; metile_l < metile_lanes; ++metile_l) {");
    ++indent_;
    line("const uint metile_t = metile_base + metile_l;");
    const std::string lane = "uint(" + std::string(dialect_.table().lane_type) + "(" +
                             per_thread(op.operands[1], "metile_t") + "))";
    // The MSL function the op renders as, and the lane each thread reads.
    const std::string what(dialect_.table().collectives[collective_index(op.kind)]);
    const std::string source = op.kind == K::SimdShuffleXor    ? "metile_l ^ " + lane
                               : op.kind == K::SimdShuffleDown ? "metile_l + " + lane
                                                               : lane;
    line("const uint metile_source = " + source + ";");
    // A lane whose source lies outside 0..31 keeps its own value (MSL semantics).
    if (op.kind == K::SimdShuffleDown)
      line("if (metile_source >= 32u) { " + array(r) + "[metile_t] = " + per_thread(x, "metile_t") +
           "; continue; }");
    line("if (metile_source >= metile_lanes) metal::detail::workgroup_missing_lane(\"" + what +
         "\", __LINE__, metile_t, metile_source, metile_lanes);");
    line(array(r) + "[metile_t] = " + per_thread(x, "metile_base + metile_source") + ";");
    close_loop();
  }

  const KernelABI& abi_;
  const int64_t threads_;
  const std::vector<bool> uniform_;
  std::vector<Storage> storage_;
  std::vector<int> defined_in_;      // the thread loop (segment) defining a value, or -1
  std::set<const ir::Op*> hoisted_;  // uniform ops computed once, before the thread loop
  std::set<ir::ValueId> escapes_;
  std::map<int, std::set<ir::ValueId>> reads_;  // per segment: values of other segments
  int segments_ = 0;
  int thread_loops_ = 0;  // the thread loops plan() counted
};

}  // namespace

WorkgroupFunction emit_workgroup_function(const ir::Kernel& metal, const CDialect& dialect,
                                          const target::Target& target, const KernelABI& abi) {
  WorkgroupFunction out;
  std::vector<bool> uniform = lower::analyze_uniformity(metal);
  out.ineligible_because = ineligibility(metal, uniform);
  WorkgroupEmitter emitter(metal, dialect, target, abi, std::move(uniform));
  if (out.ineligible_because.empty()) out.ineligible_because = emitter.plan();
  if (!out.ineligible_because.empty()) {
    out.source = std::string(kHostExecutionMarker) + "fibers (" + out.ineligible_because + ")\n";
    return out;
  }
  const std::string name = abi.kernel_name + "_workgroup";
  const std::vector<std::string> params = body_parameters(abi, dialect);
  std::string signature = "static void " + name + "(";
  // The kernel's parameters, the threadgroup block and the threadgroup's two coordinates.
  for (size_t i = 0; i < abi.params.size() + 3; ++i)
    signature += "\n    " + params[i] + (i + 1 < abi.params.size() + 3 ? "," : ")");
  const std::string statements = emitter.statements();
  out.source = std::string(kHostExecutionMarker) + "workgroup " + name + "\n" +
               "#ifdef METILE_HOST_EMULATOR\n" + signature + " {\n";
  const int before = static_cast<int>(std::count(out.source.begin(), out.source.end(), '\n'));
  for (SourceLine l : emitter.source_lines()) {
    l.line += before;
    out.source_lines.push_back(std::move(l));
  }
  out.source += statements + "}\n#endif\n";
  return out;
}

}  // namespace metile::codegen
