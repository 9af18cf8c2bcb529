#include "metile/codegen/host/workgroup_steps.h"

#include <algorithm>
#include <iterator>

#include "metile/support/errors.h"

namespace metile::codegen::workgroup {

namespace {

using K = ir::OpKind;

// A for whose bounds all threads share runs outside the thread loops even without a
// rendezvous in it: the loop over the threads is then the innermost one, straight-line code
// the host compiler vectorises (a thread's own loop inside it would keep it scalar).
bool is_uniform_for(const ir::Op& op, const std::vector<bool>& uniform) {
  return op.kind == K::For && uniform[op.operands[0]] && uniform[op.operands[1]] &&
         uniform[op.operands[2]];
}

}  // namespace

bool is_collective(const ir::Op& op) {
  return ir::op_info(op.kind).rule == ir::TypeRule::SimdCollective;
}

bool is_rendezvous(const ir::Op& op) {
  return op.kind == K::Barrier || is_collective(op);
}

bool contains_rendezvous(const ir::Op& op) {
  bool found = false;
  for (const ir::Block& region : op.regions)
    ir::walk(region, [&](const ir::Op& inner) { found = found || is_rendezvous(inner); });
  return found;
}

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

std::string at_line(const ir::Op& op) {
  return op.loc.known() ? " at " + op.loc.str() : "";
}

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

}  // namespace metile::codegen::workgroup
