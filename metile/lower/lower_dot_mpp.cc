// descriptor_matmul on Metal 4's tensor ops: one mpp_matmul2d whose epilogue region is the
// Tile IR epilogue per accumulator element. A splat becomes its scalar (a constant or a runtime
// parameter the region reads from outside, captured at kernel entry), every other epilogue op
// the same op on one f32 element; the store's conversion to the output dtype ends it.
#include <map>
#include <optional>
#include <set>

#include "metile/lower/lowering_steps.h"

namespace metile::lower {

namespace {

// The kernel's scalar parameter that `v` splats, if any (cse may have moved the splat out of
// the region).
std::optional<ir::ValueId> splatted_parameter(const ir::Kernel& k, const ir::Op& splat) {
  const ir::ValueId s = splat.operands[0];
  for (const ir::Param& p : k.params)
    if (p.value == s) return s;
  return std::nullopt;
}

const ir::Op* top_level_definer(const ir::Kernel& k, ir::ValueId v) {
  for (const ir::Op& op : k.body.ops)
    if (!op.results.empty() && op.results[0] == v) return &op;
  return nullptr;
}

std::string describe_conversion(ir::DType from, ir::DType to) {
  if (from == to) return "none (" + std::string(ir::dtype_name(to)) + ")";
  return std::string(ir::dtype_name(from)) + " -> " + std::string(ir::dtype_name(to));
}

}  // namespace

void lower_descriptor_matmul(Lowering& l, const ir::Op& op) {
  const schedule::SchedulePlan& plan = l.schedule_plan;
  if (plan.backend != schedule::Backend::TensorOps ||
      plan.strategy != schedule::MatrixStrategy::MppMatmul2d)
    l.not_supported(op,
                    "descriptor_matmul lowers only on the tensor_ops backend's Metal 4 "
                    "matmul2d strategy; the plan has backend '" +
                        std::string(schedule::backend_name(plan.backend)) + "' (" +
                        std::string(schedule::matrix_strategy_name(plan.strategy)) + ")");
  static const char* const roles[] = {"a",        "b",     "c",        "rows",
                                      "columns",  "inner", "a stride", "b stride",
                                      "c stride", "row",   "column"};
  std::vector<ir::ValueId> operands;
  for (size_t i = 0; i < op.operands.size(); ++i)
    operands.push_back(l.uniform_scalar(op, op.operands[i], roles[i]));

  const ir::Block& epilogue = op.regions[0];
  const ir::Type& acc = l.tile_type(epilogue.args[0]);
  ir::Block region;
  region.args.push_back(l.metal.new_value(ir::Type::scalar(ir::DType::f32), "acc"));
  std::map<ir::ValueId, ir::ValueId> element{{epilogue.args[0], region.args[0]}};
  std::set<ir::ValueId> leaves;  // the runtime scalar parameters the epilogue reads
  FusedEpilogue record;
  record.store = "descriptor_matmul" + (op.loc.known() ? " at " + op.loc.str() : "");
  // An operand from outside the region (cse may share a splat with the kernel) must be
  // uniform: one scalar for every element.
  const auto element_of = [&](ir::ValueId v) {
    if (const auto it = element.find(v); it != element.end()) return it->second;
    const ir::Op* definer = top_level_definer(l.tile, v);
    if (definer && definer->kind == ir::OpKind::Splat)
      if (const auto parameter = splatted_parameter(l.tile, *definer)) leaves.insert(*parameter);
    const LoweredValue& outer = l.get(v);
    if (!outer.uniform)
      l.not_supported(op, "its epilogue reads " + l.name(v) +
                              ", a tile defined outside it that is not one uniform scalar");
    return outer.slots[0];
  };
  for (const ir::Op& e : epilogue.ops) {
    if (e.kind == ir::OpKind::Splat) {
      const ir::ValueId s = e.operands[0];
      element[e.results[0]] = l.uniform_scalar(op, s, "epilogue scalar");
      if (const auto parameter = splatted_parameter(l.tile, e)) leaves.insert(*parameter);
      continue;
    }
    ir::Op scalar;
    scalar.kind = e.kind;
    scalar.attrs = e.attrs;
    scalar.loc = e.loc;
    for (ir::ValueId v : e.operands) scalar.operands.push_back(element_of(v));
    for (ir::ValueId r : e.results) {
      const ir::ValueId fresh = l.metal.new_value(ir::Type::scalar(l.tile_type(r).dtype));
      element[r] = fresh;
      scalar.results.push_back(fresh);
    }
    if (e.kind != ir::OpKind::Yield) record.ops.push_back(std::string(ir::op_name(e.kind)));
    region.ops.push_back(std::move(scalar));
  }
  for (ir::ValueId leaf : leaves) record.scalar_parameters.push_back(l.name(leaf));
  const ir::DType output = l.tile_type(epilogue.ops.back().operands[0]).dtype;
  ir::DType computed = ir::DType::f32;
  for (const ir::Op& e : epilogue.ops)
    if (e.kind == ir::OpKind::Cast) computed = l.tile_type(e.operands[0]).dtype;
  record.output_conversion = describe_conversion(computed, output);
  record.backend = "tensor_ops (mpp_matmul2d)";

  ir::Attrs attrs;
  attrs["m"] = acc.shape[0];
  attrs["n"] = acc.shape[1];
  attrs["simdgroups"] = int64_t{plan.num_simdgroups};
  if (op.has_attr("precision")) attrs["precision"] = op.str_attr("precision");
  l.builder.create(ir::OpKind::MppMatmul2d, std::move(operands), {}, std::move(attrs),
                   {std::move(region)});
  l.fused_epilogues.push_back(std::move(record));
}

}  // namespace metile::lower
