#include "metile/lower/form_descriptor_matmul.h"

#include <map>
#include <set>
#include <vector>

#include "metile/lower/descriptor_epilogue.h"
#include "metile/lower/match_descriptor_gemm.h"
#include "metile/support/errors.h"

namespace metile::lower {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

// The operands of descriptor_matmul (ops.def): a, b and c's bases, rows, columns, inner, the
// three row strides, row0 and column0 (kNoValue: 0).
std::vector<ValueId> matmul_operands(const DescriptorGemm& m) {
  return {m.a.base,       m.b.base,       m.c.base,       m.a.rows, m.b.columns, m.a.columns,
          m.a.row_stride, m.b.row_stride, m.c.row_stride, m.row0,   m.column0};
}

ir::Kernel rewrite(ir::Kernel k, const DescriptorGemm& m, const std::vector<const Op*>& epilogue) {
  const Op& loop = k.body.ops[m.loop];
  const ValueId acc = loop.results[0];
  ir::Block region;
  region.args.push_back(k.new_value(k.type(acc), "acc"));
  std::map<ValueId, ValueId> renamed{{acc, region.args[0]}};
  const auto get = [&](ValueId v) {
    const auto it = renamed.find(v);
    return it == renamed.end() ? v : it->second;
  };
  for (const Op* original : epilogue) {
    Op op = *original;
    for (ValueId& v : op.operands) v = get(v);
    for (ValueId& r : op.results) {
      const ValueId fresh = k.new_value(k.type(r));
      renamed[r] = fresh;
      r = fresh;
    }
    region.ops.push_back(std::move(op));
  }
  Op yield;
  yield.kind = OpKind::Yield;
  yield.operands = {get(m.stored)};
  yield.loc = k.body.ops[m.store].loc;
  region.ops.push_back(std::move(yield));

  std::vector<Op> prefix;
  std::vector<ValueId> operands = matmul_operands(m);
  for (size_t i : {size_t{9}, size_t{10}})
    if (operands[i] == ir::kNoValue) {
      Op zero;
      zero.kind = OpKind::Constant;
      zero.attrs["value"] = int64_t{0};
      zero.results = {k.new_value(ir::Type::scalar(ir::DType::i32))};
      zero.loc = loop.loc;
      operands[i] = zero.results[0];
      prefix.push_back(std::move(zero));
    }
  Op matmul;
  matmul.kind = OpKind::DescriptorMatmul;
  matmul.operands = std::move(operands);
  if (m.dot->has_attr("precision")) matmul.attrs["precision"] = m.dot->str_attr("precision");
  matmul.regions.push_back(std::move(region));
  matmul.loc = loop.loc;

  // The epilogue's ops of the accumulator move into the region; its splats may serve others
  // (dce removes them when they do not).
  std::set<const Op*> moved;
  for (const Op* op : epilogue)
    if (op->kind != OpKind::Splat) moved.insert(op);
  std::vector<Op> ops;
  for (size_t i = 0; i < k.body.ops.size(); ++i) {
    if (i == m.loop || moved.count(&k.body.ops[i])) continue;
    if (i == m.store) {
      for (Op& z : prefix) ops.push_back(std::move(z));
      ops.push_back(std::move(matmul));
      continue;
    }
    ops.push_back(std::move(k.body.ops[i]));
  }
  k.body.ops = std::move(ops);
  return k;
}

}  // namespace

bool tensor_backend_wanted(const target::Target& target,
                           const std::optional<schedule::Schedule>& schedule) {
  if (!target.matrix_facilities.has(target::MatrixFacility::AppleTensorOps)) return false;
  const schedule::Schedule s = schedule.value_or(schedule::Schedule{});
  if (s.backend == schedule::Backend::TensorOps) return true;
  return s.backend == schedule::Backend::Auto && !s.vector_width && s.double_buffer != true &&
         s.staging != schedule::Staging::Threadgroup;
}

DescriptorMatmulForming form_descriptor_matmul(ir::Kernel tile, const target::Target& target,
                                               const std::optional<schedule::Schedule>& schedule) {
  bool has_dot = false;
  ir::walk(tile.body, [&](const Op& op) { has_dot = has_dot || op.kind == OpKind::Dot; });
  // Without a dot plan_schedule says what the kernel lacks.
  if (!has_dot) return {{std::move(tile), false}, std::nullopt, ""};
  const KernelValues values(tile);
  std::variant<DescriptorGemm, GemmMismatch> found = match_descriptor_gemm(values);
  std::variant<std::vector<const Op*>, GemmMismatch> epilogue = GemmMismatch{};
  if (const DescriptorGemm* gemm = std::get_if<DescriptorGemm>(&found)) {
    epilogue = match_pointwise_epilogue(values, *gemm);
    if (const GemmMismatch* bad = std::get_if<GemmMismatch>(&epilogue)) found = *bad;
  }
  if (!tensor_backend_wanted(target, schedule)) {
    std::optional<FusedEpilogue> unformed;
    if (const DescriptorGemm* gemm = std::get_if<DescriptorGemm>(&found))
      unformed =
          describe_register_epilogue(values, *gemm, std::get<std::vector<const Op*>>(epilogue));
    return {{std::move(tile), false}, std::move(unformed), ""};
  }
  if (const GemmMismatch* bad = std::get_if<GemmMismatch>(&found)) {
    const std::string why = (bad->op ? values.describe(bad->op) + " " : std::string()) + bad->why;
    if (!schedule || schedule->backend != schedule::Backend::TensorOps)
      return {{std::move(tile), false}, std::nullopt, why};
    throw NotSupported(
        "form_descriptor_matmul: Schedule(backend='tensor_ops') cannot lower "
        "kernel '" +
            tile.name + "' on target " + target.name + ": " + why,
        bad->op ? bad->op->loc : SourceLocation{});
  }
  ir::Kernel formed = rewrite(std::move(tile), std::get<DescriptorGemm>(found),
                              std::get<std::vector<const Op*>>(epilogue));
  return {{std::move(formed), true}, std::nullopt, ""};
}

}  // namespace metile::lower
