// The thread loops of a work-group function: a barrier-free run of ops as one loop over the
// threadgroup's threads, in two versions where guards (masks, conditions, bounds checks) its own
// pure ops compute could all hold, and the steps of a block in order.
#include <map>
#include <optional>

#include "metile/codegen/host/workgroup_function.h"

namespace metile::codegen::workgroup {

namespace {

using K = ir::OpKind;

}  // namespace

void WorkgroupEmitter::open_thread_loop() {
  const auto& g = dialect_.table().geometry;
  const auto& tpt = abi_.threads_per_threadgroup;
  // The threads of a barrier-free region are independent in a race-free kernel (the GPU
  // runs them at once), so the loop over them carries no dependence through memory.
  line("#pragma GCC ivdep");
  line("for (uint metile_tid = 0; metile_tid < " + std::to_string(threads_) + "u; ++metile_tid) {");
  ++indent_;
  const std::string x = std::to_string(tpt[0]) + "u", xy = std::to_string(tpt[0] * tpt[1]) + "u";
  line("const uint3 " + std::string(g[2].name) +
       (tpt[1] == 1 && tpt[2] == 1 ? " = uint3(metile_tid, 0u, 0u);"
                                   : " = uint3(metile_tid % " + x + ", metile_tid / " + x + " % " +
                                         std::to_string(tpt[1]) + "u, metile_tid / " + xy + ");"));
  line("const uint " + std::string(g[4].name) + " = metile_tid % 32u;");
  line("const uint " + std::string(g[5].name) + " = metile_tid / 32u;");
  report_thread_ = "metile_tid";
}

void WorkgroupEmitter::close_loop() {
  --indent_;
  line("}");
  report_thread_ = "0u";
}

void WorkgroupEmitter::emit_steps(const ir::Block& block) {
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
WorkgroupEmitter::Guards WorkgroupEmitter::guards_of(
    const std::vector<const ir::Op*>& looped) const {
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

void WorkgroupEmitter::emit_reads(int segment) {
  for (ir::ValueId v : reads_[segment])
    line(declared(v) + name(v) + " = " + array(v) + "[metile_tid];");
}

// One loop over the threads running `looped`, with the values in `known_true` as true.
void WorkgroupEmitter::emit_thread_loop(const std::vector<const ir::Op*>& looped, int segment,
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
}  // namespace metile::codegen::workgroup
