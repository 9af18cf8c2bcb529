// The one scalar evaluator: the value of an op of ops.def on scalar values, with the semantics
// the emitted code has on every target. Constant folding folds with it and the test
// interpreters of Tile IR and Metal IR compute with it, so the three cannot disagree.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "metile/ir/ir.h"

namespace metile::ir {

// The ops the evaluator computes: those ops.def marks SCALAR, numbered as their OpKind. A
// switch over them lists exactly the ops with scalar semantics.
enum class ScalarOp : uint16_t {
#define METILE_SCALAR_SCALAR(name) name = static_cast<uint16_t>(OpKind::name),
#define METILE_SCALAR_NO_SCALAR(name)
#define METILE_OP(name, text, dialects, operands, results, regions, attrs, traits, rule, scalar, \
                  doc)                                                                           \
  METILE_SCALAR_##scalar(name)
#include "metile/ir/ops.def"
#undef METILE_OP
#undef METILE_SCALAR_NO_SCALAR
#undef METILE_SCALAR_SCALAR
};

// kind as a ScalarOp; nullopt for an op without scalar semantics.
std::optional<ScalarOp> scalar_op(OpKind kind);

// x as a value of the integer or i1 dtype t: wrapped to t's width (u32 as 0..2^32-1, i1 as
// 0 or 1); i64 unchanged.
int64_t wrap_integer(DType t, int64_t x);

// x rounded to the nearest value of the float dtype t (ties to even, overflow to infinity,
// f16 and bf16 subnormals kept).
double round_float(DType t, double x);

// A scalar of one dtype. Integers and i1 live in `i`, always wrapped to the dtype; floats in
// `f`, always a value of the dtype held as a double.
struct Scalar {
  DType dtype = DType::i32;
  int64_t i = 0;
  double f = 0;

  static Scalar of(DType t, int64_t x);  // wrapped, or converted to the float dtype
  static Scalar of(DType t, double x);   // truncated and wrapped, or rounded to the float dtype
  static Scalar of_attr(DType t, const Attr& value);  // a constant's int64_t or double value
  Attr to_attr() const;   // int64_t for integers and i1, double for floats
  double number() const;  // either kind as a double
};

enum class Outcome {
  exact,        // what every target computes at run time
  approximate,  // a reference value; targets may differ from it (see scalar_eval.cc)
  undefined,    // the op's behaviour is undefined for these operand values
  unsupported,  // not a computation on scalars, or not defined on these dtypes
};

struct Evaluation {
  Outcome outcome = Outcome::unsupported;
  Scalar value;             // exact and approximate only
  const char* reason = "";  // why there is no value, or why it is approximate

  bool has_value() const { return outcome == Outcome::exact || outcome == Outcome::approximate; }
};

// `kind` applied to `operands` (each with the dtype the IR gives it: the compared dtype for
// cmp, (i1, t, t) for select), producing a `result` scalar. `attrs` supplies {pred} of cmp and
// {value} of constant; {fast} of the math functions is ignored (the reference is precise).
Evaluation evaluate(OpKind kind, const Attrs& attrs, std::span<const Scalar> operands,
                    DType result);

}  // namespace metile::ir
