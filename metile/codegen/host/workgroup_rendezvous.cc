// What sits between a work-group function's thread loops: barriers, SIMD collectives as loops
// over each SIMD group's lanes, and for/if whose bounds and conditions all threads share.
#include <utility>

#include "metile/codegen/host/workgroup_function.h"

namespace metile::codegen::workgroup {

namespace {

using K = ir::OpKind;

}  // namespace

void WorkgroupEmitter::emit_rendezvous(const ir::Op& op) {
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
void WorkgroupEmitter::copy_yields(const ir::Block& region,
                                   const std::vector<ir::ValueId>& targets) {
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

void WorkgroupEmitter::emit_uniform_for(const ir::Op& op) {
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

void WorkgroupEmitter::emit_uniform_if(const ir::Op& op) {
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
void WorkgroupEmitter::emit_collective(const ir::Op& op) {
  const ir::ValueId r = op.results[0], x = op.operands[0];
  declare_array(r);
  const std::string n = std::to_string(threads_) + "u";
  line("for (uint metile_base = 0; metile_base < " + n + "; metile_base += 32u) {");
  ++indent_;
  line("const uint metile_lanes = metile_base + 32u <= " + n + " ? 32u : " + n + " - metile_base;");
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

void WorkgroupEmitter::emit_shuffle(const ir::Op& op) {
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
}  // namespace metile::codegen::workgroup
