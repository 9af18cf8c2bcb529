#include "metile/trace/infer_access.h"

namespace metile::trace {

namespace {
using ir::Op;
using ir::OpKind;
using ir::ValueId;
using Origins = std::vector<std::set<int>>;  // by ValueId: the buffers a value derives from

// Adds `from`'s buffers to `to`'s; true when that added any.
bool flow(Origins& origins, ValueId from, ValueId to) {
  const size_t before = origins[to].size();
  origins[to].insert(origins[from].begin(), origins[from].end());
  return origins[to].size() != before;
}

const std::vector<ValueId>& yields(const ir::Block& region) {
  METILE_ASSERT(!region.ops.empty() && region.ops.back().kind == OpKind::Yield,
                "a region ends with a yield");
  return region.ops.back().operands;
}

// One step of the data flow at `op`; true when some value gained a buffer.
bool propagate(const ir::Kernel& kernel, const Op& op, Origins& origins) {
  bool changed = false;
  if (op.kind == OpKind::For) {
    const ir::Block& body = op.regions[0];
    for (size_t k = 0; k < op.results.size(); ++k)
      for (ValueId source : {op.operands[3 + k], yields(body)[k]}) {
        changed |= flow(origins, source, body.args[1 + k]);
        changed |= flow(origins, source, op.results[k]);
      }
  } else if (op.kind == OpKind::While) {
    // inits and the body's yields reach the condition's arguments; what it passes on reaches
    // the body's arguments and the results.
    const ir::Block &before = op.regions[0], &after = op.regions[1];
    for (size_t k = 0; k < op.results.size(); ++k) {
      for (ValueId source : {op.operands[k], yields(after)[k]})
        changed |= flow(origins, source, before.args[k]);
      changed |= flow(origins, yields(before)[1 + k], after.args[k]);
      changed |= flow(origins, yields(before)[1 + k], op.results[k]);
    }
  } else if (op.kind == OpKind::If) {
    for (const ir::Block& branch : op.regions)
      for (size_t k = 0; k < op.results.size(); ++k)
        changed |= flow(origins, yields(branch)[k], op.results[k]);
  } else {
    // Any other op making a pointer or a descriptor derives it from all its operands.
    for (ValueId result : op.results) {
      const ir::Type& t = kernel.type(result);
      if (!t.pointer && !t.is_desc()) continue;
      for (ValueId operand : op.operands) changed |= flow(origins, operand, result);
    }
  }
  return changed;
}

void mark(BufferUses& uses, const std::set<int>& buffers, bool read, const SourceLocation& loc) {
  for (int index : buffers) {
    BufferUse& use = uses.params[index];
    if (read && !use.reads) use.first_read = loc;
    if (!read && !use.writes) use.first_write = loc;
    (read ? use.reads : use.writes) = true;
  }
}
}  // namespace

BufferUses find_buffer_uses(const ir::Kernel& kernel,
                            const std::set<ir::ValueId>& inferred_descriptors) {
  Origins origins(kernel.types.size());
  for (size_t i = 0; i < kernel.params.size(); ++i)
    if (kernel.type(kernel.params[i].value).pointer)
      origins[kernel.params[i].value].insert(static_cast<int>(i));
  // Loop-carried values can bring a buffer back to the top of the body: repeat to a fixpoint.
  for (bool changed = true; changed;) {
    changed = false;
    ir::walk(kernel.body, [&](const Op& op) { changed |= propagate(kernel, op, origins); });
  }

  BufferUses uses;
  uses.params.resize(kernel.params.size());
  ir::walk(kernel.body, [&](const Op& op) {
    if (op.operands.empty()) return;
    // A memory op's first operand is its address (a pointer or a tensor descriptor), after
    // the fragment a matrix store writes.
    const bool fragment_first =
        op.kind == OpKind::MatrixStore || op.kind == OpKind::DeviceTileStore;
    const std::set<int>& through = origins[op.operands[fragment_first ? 1 : 0]];
    const ir::OpInfo& info = ir::op_info(op.kind);
    if (info.has(ir::Trait::ReadsMemory)) mark(uses, through, true, op.loc);
    if (info.has(ir::Trait::WritesMemory)) mark(uses, through, false, op.loc);
    if (op.kind == OpKind::MakeTensor) {
      uses.descriptor_buffers[op.results[0]] = through;
      if (inferred_descriptors.count(op.results[0])) return;
      const std::string& access = op.str_attr("access");
      if (access != "write") mark(uses, through, true, op.loc);
      if (access != "read") mark(uses, through, false, op.loc);
    }
  });
  return uses;
}

std::string implied_access(const BufferUse& use) {
  if (use.reads && use.writes) return "read_write";
  return use.writes ? "write" : "read";
}

}  // namespace metile::trace
