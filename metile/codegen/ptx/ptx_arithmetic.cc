// PtxWriter: arithmetic, comparisons, selects, casts and math functions of scalars.
#include "metile/codegen/ptx/ptx_writer.h"

#include "metile/codegen/ptx/ptx_instructions.h"
#include "metile/support/errors.h"

namespace metile::codegen::ptx {

using ir::DType;
using ir::OpKind;

void PtxWriter::binary(const ir::Op& op) {
  require_scalars(op);
  const DType t = type(op.results[0]).dtype;
  const std::string s = suffix(op, t);
  const bool f = t == DType::f32, pred = t == DType::i1;
  const std::string bits(ptx::bits_suffix(t));
  std::string instruction;
  switch (op.kind) {
    case OpKind::Add:
      instruction = pred ? "" : "add." + s;
      break;
    case OpKind::Sub:
      instruction = pred ? "" : "sub." + s;
      break;
    case OpKind::Mul:
      instruction = pred ? "" : f ? "mul.f32" : "mul.lo." + s;
      break;
    case OpKind::Div:
      instruction = pred ? "" : f ? (fast(op) ? "div.full.f32" : "div.rn.f32") : "div." + s;
      break;
    case OpKind::Rem:
      instruction = f || pred ? "" : "rem." + s;
      break;
    case OpKind::Min:
      instruction = pred ? "" : "min." + s;
      break;
    case OpKind::Max:
      instruction = pred ? "" : "max." + s;
      break;
    case OpKind::And:
      instruction = "and." + bits;
      break;
    case OpKind::Or:
      instruction = "or." + bits;
      break;
    case OpKind::Xor:
      instruction = "xor." + bits;
      break;
    case OpKind::Shl:
      instruction = pred ? "" : "shl." + bits;
      break;
    case OpKind::Shr:
      instruction = pred ? "" : "shr." + s;
      break;
    default:
      break;
  }
  if (instruction.empty()) unsupported(op, "on " + std::string(ir::dtype_name(t)) + " values");
  std::string b = in(op, 1);
  // PTX shifts take a u32 amount.
  if ((op.kind == OpKind::Shl || op.kind == OpKind::Shr) && t == DType::i64) {
    const std::string amount = temp(".u32");
    line("cvt.u32.s64 " + amount + ", " + b + ";");
    b = amount;
  }
  line(instruction + " " + out(op) + ", " + in(op, 0) + ", " + b + ";");
}

void PtxWriter::compare(const ir::Op& op) {
  require_scalars(op);
  const DType t = type(op.operands[0]).dtype;
  std::string pred = op.str_attr("pred");
  if (t == DType::i1) unsupported(op, "on i1 values");
  // C's != on floats is true for NaN: PTX's unordered form.
  if (t == DType::f32 && pred == "ne") pred = "neu";
  line("setp." + pred + "." + suffix(op, t) + " " + out(op) + ", " + in(op, 0) + ", " + in(op, 1) +
       ";");
}

void PtxWriter::select(const ir::Op& op) {
  require_scalars(op);
  const DType t = type(op.results[0]).dtype;
  if (t == DType::i1) {
    const std::string a = temp(".pred"), b = temp(".pred");
    line("and.pred " + a + ", " + in(op, 0) + ", " + in(op, 1) + ";");
    line("not.pred " + b + ", " + in(op, 0) + ";");
    line("and.pred " + b + ", " + b + ", " + in(op, 2) + ";");
    return line("or.pred " + out(op) + ", " + a + ", " + b + ";");
  }
  line("selp." + suffix(op, t) + " " + out(op) + ", " + in(op, 1) + ", " + in(op, 2) + ", " +
       in(op, 0) + ";");
}

void PtxWriter::cast(const ir::Op& op) {
  require_scalars(op);
  const DType from = type(op.operands[0]).dtype, to = type(op.results[0]).dtype;
  const std::string a = in(op, 0), d = out(op);
  if (from == to)
    return line("mov." + std::string(ptx::bits_suffix(to)) + " " + d + ", " + a + ";");
  if (from == DType::i1) {
    if (to == DType::f32) return line("selp.f32 " + d + ", 0f3F800000, 0f00000000, " + a + ";");
    return line("selp." + suffix(op, to) + " " + d + ", 1, 0, " + a + ";");
  }
  if (to == DType::i1)
    return line("setp.ne." + suffix(op, from) + " " + d + ", " + a + ", " +
                (from == DType::f32 ? "0f00000000" : "0") + ";");
  const std::string sf = suffix(op, from), st = suffix(op, to);
  if (to == DType::f32) return line("cvt.rn.f32." + sf + " " + d + ", " + a + ";");
  if (from == DType::f32) return line("cvt.rzi." + st + ".f32 " + d + ", " + a + ";");
  line("cvt." + st + "." + sf + " " + d + ", " + a + ";");
}

void PtxWriter::unary(const ir::Op& op) {
  require_scalars(op);
  const DType t = type(op.results[0]).dtype;
  const std::string d = out(op), a = in(op, 0);
  if (op.kind == OpKind::Neg || op.kind == OpKind::Abs) {
    if (t == DType::i1) unsupported(op, "on i1 values");
    return line(std::string(op.kind == OpKind::Neg ? "neg." : "abs.") + suffix(op, t) + " " + d +
                ", " + a + ";");
  }
  if (t != DType::f32) unsupported(op, "on " + std::string(ir::dtype_name(t)) + " values");
  const bool f = fast(op);
  switch (op.kind) {
    case OpKind::Exp: {  // Triton's and __expf's: 2^(x log2 e)
      const std::string scaled = temp(".f32");
      line("mul.f32 " + scaled + ", " + a + ", " + std::string(ptx::kLog2E) + ";");
      return line(ptx::ex2_approx(f) + " " + d + ", " + scaled + ";");
    }
    case OpKind::Exp2:
      return line(ptx::ex2_approx(f) + " " + d + ", " + a + ";");
    case OpKind::Log: {
      const std::string log2 = temp(".f32");
      line("lg2.approx.f32 " + log2 + ", " + a + ";");
      return line("mul.f32 " + d + ", " + log2 + ", " + std::string(ptx::kLn2) + ";");
    }
    case OpKind::Sqrt:
      return line(std::string(f ? "sqrt.approx.f32 " : "sqrt.rn.f32 ") + d + ", " + a + ";");
    case OpKind::Rsqrt:  // rsqrtf is this approximation too
      return line("rsqrt.approx.f32 " + d + ", " + a + ";");
    case OpKind::Floor:
      return line("cvt.rmi.f32.f32 " + d + ", " + a + ";");
    case OpKind::Ceil:
      return line("cvt.rpi.f32.f32 " + d + ", " + a + ";");
    case OpKind::Tanh:
    case OpKind::Sin:
    case OpKind::Cos:
      if (!f) unsupported(op, "without fast math (no precise sequence yet)");
      return line(std::string(op.kind == OpKind::Tanh  ? "tanh.approx.f32 "
                              : op.kind == OpKind::Sin ? "sin.approx.f32 "
                                                       : "cos.approx.f32 ") +
                  d + ", " + a + ";");
    default:
      unsupported(op, "");
  }
}

}  // namespace metile::codegen::ptx
