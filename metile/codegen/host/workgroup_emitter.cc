#include "metile/codegen/host/workgroup_emitter.h"

#include <algorithm>
#include <utility>

#include "metile/codegen/entry_wrapper.h"
#include "metile/codegen/host/workgroup_function.h"
#include "metile/lower/uniformity.h"

namespace metile::codegen {

namespace workgroup {

namespace {

using K = ir::OpKind;

bool writes_memory(const ir::Op& op) {
  bool writes = ir::op_info(op.kind).has(ir::Trait::WritesMemory);
  for (const ir::Block& region : op.regions)
    ir::walk(region, [&](const ir::Op& inner) {
      writes = writes || ir::op_info(inner.kind).has(ir::Trait::WritesMemory);
    });
  return writes;
}

}  // namespace

WorkgroupEmitter::WorkgroupEmitter(const ir::Kernel& k, const CDialect& d, const target::Target& t,
                                   const KernelABI& abi, std::vector<bool> uniform)
    : CEmitter(k, d, t),
      abi_(abi),
      threads_(abi.threads_total()),
      uniform_(std::move(uniform)),
      storage_(k.types.size(), Storage::Scalar),
      defined_in_(k.types.size(), -1) {
  report_thread_ = "0u";  // outside the thread loops every thread does the same
}

std::string WorkgroupEmitter::plan() {
  segments_ = 0;
  thread_loops_ = 0;
  thread_loop_ops_ = 0;
  plan_block(kernel_.body);
  if (thread_loops_ > kMaxThreadLoops)
    return "it would need " + std::to_string(thread_loops_) + " thread loops, more than the " +
           std::to_string(kMaxThreadLoops) + " the host compiler builds in reasonable time";
  if (thread_loop_ops_ > kMaxThreadLoopOps)
    return "its thread loops would hold " + std::to_string(thread_loop_ops_) +
           " ops, more than the " + std::to_string(kMaxThreadLoopOps) +
           " the host compiler builds in reasonable time";
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

std::string WorkgroupEmitter::statements() {
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

// Planning: the same walk as emission, counting thread loops (segments).
void WorkgroupEmitter::use(ir::ValueId v, int segment) {
  if (defined_in_[v] >= 0 && defined_in_[v] != segment) {
    escapes_.insert(v);
    reads_[segment].insert(v);
  }
}

void WorkgroupEmitter::define(ir::ValueId v, int segment, Storage s) {
  defined_in_[v] = segment;
  storage_[v] = s;
}

// A uniform op computed once, before the thread loop. A load qualifies only before any
// write of its run: every thread would read the same bytes, which no other thread of a
// race-free kernel writes until the next barrier.
bool WorkgroupEmitter::hoistable(const ir::Op& op, bool after_a_write) const {
  const ir::OpInfo& info = ir::op_info(op.kind);
  const bool uniform_load = op.kind == K::Load && !after_a_write;
  if (!op.regions.empty() || !(info.has(ir::Trait::Pure) || uniform_load) ||
      info.has(ir::Trait::Varying) || op.results.size() != 1 || !uniform_[op.results[0]])
    return false;
  return std::all_of(op.operands.begin(), op.operands.end(),
                     [&](ir::ValueId v) { return storage_[v] == Storage::Scalar; });
}

void WorkgroupEmitter::plan_block(const ir::Block& block) {
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
        ++thread_loop_ops_;
        for (ir::ValueId v : op->operands) use(v, segment);
        for (const ir::Block& region : op->regions)
          ir::walk(region, [&](const ir::Op& inner) {
            ++thread_loop_ops_;
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

void WorkgroupEmitter::declare_array(ir::ValueId v) {
  line(type_of(v) + " " + array(v) + "[" + std::to_string(threads_) + "];");
}

}  // namespace workgroup

WorkgroupFunction emit_workgroup_function(const ir::Kernel& metal, const CDialect& dialect,
                                          const target::Target& target, const KernelABI& abi) {
  WorkgroupFunction out;
  std::vector<bool> uniform = lower::analyze_uniformity(metal);
  out.ineligible_because = workgroup::ineligibility(metal, uniform);
  workgroup::WorkgroupEmitter emitter(metal, dialect, target, abi, std::move(uniform));
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
