// One-op kernels built from an op's facts alone, for tests that check every op of ops.def.
#pragma once

#include <string>

#include "metile/ir/ir.h"

namespace metile::ir::op_samples {

// Attributes that satisfy the op's schema: each required one, 0, the first choice or the
// one-element identity layout.
inline Attrs valid_attrs(const OpInfo& info) {
  Attrs attrs;
  for (const AttrSpec& spec : info.attrs) {
    if (!spec.required) continue;
    if (spec.kind == AttrKind::String)
      attrs[std::string(spec.name)] = std::string(spec.choices.substr(0, spec.choices.find('|')));
    else if (spec.kind == AttrKind::Layout)
      attrs[std::string(spec.name)] = ThreadLayout::identity(1);
    else
      attrs[std::string(spec.name)] = int64_t{0};
  }
  return attrs;
}

// An op of `kind` whose operands are all `operand`, with `results` new i32 scalars of k and
// `regions` empty regions.
inline Op make_op(Kernel& k, OpKind kind, size_t operands, ValueId operand, size_t results,
                  size_t regions, Attrs attrs) {
  Op op;
  op.kind = kind;
  op.operands.assign(operands, operand);
  for (size_t i = 0; i < results; ++i) op.results.push_back(k.new_value(Type::scalar(DType::i32)));
  op.regions.resize(regions);
  op.attrs = std::move(attrs);
  return op;
}

// A kernel of the op's dialect with an i32 scalar parameter %n and no ops.
inline Kernel kernel_for(const OpInfo& info) {
  Kernel k;
  k.dialect = info.in_tile ? Dialect::Tile : Dialect::Metal;
  k.name = "k";
  if (k.dialect == Dialect::Metal)
    k.attrs = {{"threads_per_threadgroup", int64_t{32}}, {"threadgroup_bytes", int64_t{0}}};
  Param n{"n", k.new_value(Type::scalar(DType::i32)), ""};
  k.params.push_back(n);
  k.body.args.push_back(n.value);
  return k;
}

// kernel_for(info) holding one op of its kind, its operands all %n.
inline Kernel one_op(const OpInfo& info, size_t operands, size_t results, size_t regions,
                     Attrs attrs) {
  Kernel k = kernel_for(info);
  k.body.ops.push_back(
      make_op(k, info.kind, operands, k.params[0].value, results, regions, std::move(attrs)));
  return k;
}

}  // namespace metile::ir::op_samples
