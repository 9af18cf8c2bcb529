#include "metile/lower/descriptor_epilogue.h"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace metile::lower {

namespace {

using ir::Op;
using ir::OpKind;
using ir::ValueId;

class EpilogueMatcher {
 public:
  EpilogueMatcher(const KernelValues& values, const DescriptorGemm& gemm)
      : v_(values), k_(values.kernel()), gemm_(gemm) {}

  std::variant<std::vector<const Op*>, GemmMismatch> match() {
    std::set<ValueId> inside;
    if (auto bad = collect(gemm_.stored, inside)) return *bad;
    // The epilogue's values feed only the epilogue and the store: nothing else may lose them.
    std::map<ValueId, int> epilogue_uses;
    for (const Op* op : epilogue_)
      for (ValueId v : op->operands) ++epilogue_uses[v];
    ++epilogue_uses[gemm_.stored];
    for (const Op* op : epilogue_)
      if (op->kind != OpKind::Splat && v_.uses(op->results[0]) != epilogue_uses[op->results[0]])
        return GemmMismatch{op,
                            "is used outside the epilogue; the tensor backend's accumulator "
                            "never leaves it"};
    if (v_.uses(gemm_.accumulator) != epilogue_uses[gemm_.accumulator])
      return GemmMismatch{&k_.body.ops[gemm_.loop], "'s accumulator is used outside the epilogue"};
    return epilogue_;
  }

 private:
  // The pure pointwise ops between the accumulator and `v`, or the one that is not.
  std::optional<GemmMismatch> collect(ValueId v, std::set<ValueId>& seen) {
    if (v == gemm_.accumulator || !seen.insert(v).second) return std::nullopt;
    const Op* op = v_.def(v);
    if (!op) return GemmMismatch{nullptr, "the stored value depends on " + v_.name(v)};
    if (op->kind == OpKind::Splat) {
      if (auto bad = scalar_leaf(op)) return bad;
      epilogue_.push_back(op);
      return std::nullopt;
    }
    if (auto bad = pointwise(*op)) return bad;
    for (ValueId operand : op->operands)
      if (auto bad = collect(operand, seen)) return bad;
    epilogue_.push_back(op);
    return std::nullopt;
  }

  // A memory read, reduction, control flow or product that a reshaping op (broadcast,
  // expand_dims, ...) carries into the epilogue: the op to name.
  const Op* underlying(const Op& op) const {
    for (ValueId v : op.operands) {
      const Op* d = v_.def(v);
      if (!d) continue;
      const OpKind k = d->kind;
      if (k == OpKind::Load || k == OpKind::TensorLoad || k == OpKind::Reduce ||
          k == OpKind::ReduceAxis || k == OpKind::Scan || k == OpKind::For || k == OpKind::If ||
          k == OpKind::While || k == OpKind::Dot)
        return d;
      if (const Op* below = underlying(*d)) return below;
    }
    return nullptr;
  }

  std::optional<GemmMismatch> pointwise(const Op& given) const {
    const Op* below = ir::is_elementwise(given.kind) ? nullptr : underlying(given);
    const Op& op = below ? *below : given;
    const OpKind k = op.kind;
    if (k == OpKind::Load || k == OpKind::TensorLoad)
      return GemmMismatch{&op,
                          "reads memory; an epilogue holds pointwise operations of the "
                          "accumulator and scalars only"};
    if (k == OpKind::Reduce || k == OpKind::ReduceAxis || k == OpKind::Scan)
      return GemmMismatch{&op, "is a reduction; an epilogue is pointwise"};
    if (k == OpKind::For || k == OpKind::If || k == OpKind::While)
      return GemmMismatch{&op, "is control flow; an epilogue is straight-line pointwise code"};
    if (k == OpKind::Dot)
      return GemmMismatch{&op, "is a second matrix product; an epilogue is pointwise"};
    if (!ir::is_elementwise(k) || ir::is_bitwise(k))
      return GemmMismatch{&op,
                          "is not a pointwise operation the epilogue supports (arithmetic, "
                          "comparisons, selections, float casts, unary math)"};
    const ir::Type& t = k_.type(op.results[0]);
    if (k == OpKind::Cast &&
        (!ir::is_float(t.dtype) || !ir::is_float(k_.type(op.operands[0]).dtype)))
      return GemmMismatch{&op, "is a cast between " +
                                   std::string(ir::dtype_name(k_.type(op.operands[0]).dtype)) +
                                   " and " + std::string(ir::dtype_name(t.dtype)) +
                                   "; the epilogue converts between float types only"};
    return std::nullopt;
  }

  // A splat's scalar: a constant or a runtime scalar parameter, not a dimension.
  std::optional<GemmMismatch> scalar_leaf(const Op* splat) const {
    ValueId s = splat->operands[0];
    const Op* op = v_.def(s);
    if (op && op->kind == OpKind::Constant) return std::nullopt;
    if (op && op->kind == OpKind::Cast && v_.is_param(op->operands[0]) &&
        is_dimension(op->operands[0]))
      s = op->operands[0];  // a dimension converted to float is still a dimension
    if (!v_.is_param(s))
      return GemmMismatch{op ? op : splat,
                          "computes an epilogue scalar; its leaves are constants "
                          "and runtime scalar parameters only"};
    if (is_dimension(s))
      return GemmMismatch{splat, "uses the dimension parameter " + v_.name(s) +
                                     " as an epilogue scalar, which static specialization and "
                                     "dimension aliasing do not preserve on every backend"};
    return std::nullopt;
  }

  // Whether a parameter sizes a descriptor or bounds a loop.
  bool is_dimension(ValueId s) const {
    bool used = false;
    ir::walk(k_.body, [&](const Op& op) {
      if (op.kind == OpKind::MakeTensor)
        for (size_t i = 1; i < op.operands.size(); ++i) used = used || op.operands[i] == s;
      if (op.kind == OpKind::For)
        for (size_t i = 0; i < 3; ++i) used = used || op.operands[i] == s;
    });
    return used;
  }

  const KernelValues& v_;
  const ir::Kernel& k_;
  const DescriptorGemm& gemm_;
  std::vector<const Op*> epilogue_;  // in program order
};

}  // namespace

std::variant<std::vector<const ir::Op*>, GemmMismatch> match_pointwise_epilogue(
    const KernelValues& values, const DescriptorGemm& gemm) {
  return EpilogueMatcher(values, gemm).match();
}

FusedEpilogue describe_register_epilogue(const KernelValues& values, const DescriptorGemm& gemm,
                                         const std::vector<const ir::Op*>& epilogue) {
  const ir::Kernel& k = values.kernel();
  FusedEpilogue e;
  e.store = values.describe(&k.body.ops[gemm.store]);
  std::set<ValueId> parameters;
  for (const Op* op : epilogue) {
    if (op->kind != OpKind::Splat) e.ops.push_back(std::string(ir::op_name(op->kind)));
    if (op->kind == OpKind::Splat && values.is_param(op->operands[0]))
      parameters.insert(op->operands[0]);
  }
  for (ValueId p : parameters) e.scalar_parameters.push_back(values.name(p));
  const ir::DType out = k.type(gemm.stored).dtype;
  e.output_conversion =
      out == ir::DType::f32 ? "none (f32)" : "f32 -> " + std::string(ir::dtype_name(out));
  return e;
}

}  // namespace metile::lower
