// PtxWriter: pointers, loads and stores (scalar and 2- or 4-wide), warp shuffles and reductions.
#include "metile/codegen/ptx/ptx_writer.h"

#include "metile/codegen/ptx/ptx_instructions.h"
#include "metile/support/errors.h"

namespace metile::codegen::ptx {

using ir::DType;
using ir::OpKind;

std::string PtxWriter::space(ir::ValueId ptr, const ir::Op& op) const {
  if (type(ptr).space == ir::AddressSpace::Threadgroup) return "shared";
  return op.has_attr("eviction") ? "global.L1::" + op.str_attr("eviction") : "global";
}

void PtxWriter::ptr_add(const ir::Op& op) {
  const DType index = type(op.operands[1]).dtype;
  const int64_t bytes = ir::dtype_bytes(type(op.operands[0]).dtype);
  const std::string d = out(op), p = in(op, 0), i = in(op, 1);
  if (!type(op.operands[1]).is_scalar()) unsupported(op, "on vector offsets");
  if (index == DType::i32 || index == DType::u32)
    return line(std::string(index == DType::i32 ? "mad.wide.s32 " : "mad.wide.u32 ") + d + ", " +
                i + ", " + std::to_string(bytes) + ", " + p + ";");
  if (index == DType::i64)
    return line("mad.lo.s64 " + d + ", " + i + ", " + std::to_string(bytes) + ", " + p + ";");
  unsupported(op, "with a " + std::string(ir::dtype_name(index)) + " offset");
}

std::string PtxWriter::memory_suffix(const ir::Op& op, DType t) const {
  if (t == DType::i1) unsupported(op, "of i1 values");
  return std::string(ptx::bits_suffix(t).empty() ? "" : ptx::arithmetic_suffix(t));
}

void PtxWriter::load(const ir::Op& op) {
  if (!type(op.results[0]).is_scalar()) unsupported(op, "of a vector");
  const DType t = type(op.results[0]).dtype;
  const std::string s = memory_suffix(op, t);
  if (s.empty()) unsupported(op, "of " + std::string(ir::dtype_name(t)) + " values");
  std::string guard;
  if (op.operands.size() == 3) {
    line("mov." + std::string(ptx::bits_suffix(t)) + " " + out(op) + ", " + in(op, 2) + ";");
    guard = "@" + in(op, 1) + " ";
  }
  line(guard + "ld." + space(op.operands[0], op) + "." + s + " " + out(op) + ", [" + in(op, 0) +
       "];");
}

void PtxWriter::store(const ir::Op& op) {
  if (!type(op.operands[1]).is_scalar()) unsupported(op, "of a vector");
  const DType t = type(op.operands[1]).dtype;
  const std::string s = memory_suffix(op, t);
  if (s.empty()) unsupported(op, "of " + std::string(ir::dtype_name(t)) + " values");
  const std::string guard = op.operands.size() == 3 ? "@" + in(op, 2) + " " : "";
  line(guard + "st." + space(op.operands[0], op) + "." + s + " [" + in(op, 0) + "], " + in(op, 1) +
       ";");
}

std::string PtxWriter::vector_suffix(const ir::Op& op, DType t, int64_t width) const {
  if ((width != 2 && width != 4) || ir::dtype_bytes(t) != 4)
    unsupported(op, "of " + std::to_string(width) + " " + std::string(ir::dtype_name(t)) +
                        " elements (the PTX route moves 2 or 4 32-bit elements)");
  return ".v" + std::to_string(width) + "." + std::string(ptx::arithmetic_suffix(t));
}

void PtxWriter::packed_load(const ir::Op& op) {
  const ir::Type& v = type(op.results[0]);
  const int64_t width = v.shape.at(0);
  std::string regs;
  for (int64_t e = 0; e < width; ++e) regs += (e ? ", " : "") + reg(op.results[0], int(e));
  line("ld." + space(op.operands[0], op) + vector_suffix(op, v.dtype, width) + " {" + regs +
       "}, [" + in(op, 0) + "];");
}

void PtxWriter::packed_store(const ir::Op& op) {
  const DType t = type(op.operands[1]).dtype;
  std::string regs;
  for (size_t i = 1; i < op.operands.size(); ++i) regs += (i > 1 ? ", " : "") + in(op, i);
  line("st." + space(op.operands[0], op) + vector_suffix(op, t, int64_t(op.operands.size()) - 1) +
       " [" + in(op, 0) + "], {" + regs + "};");
}

void PtxWriter::shuffle(const ir::Op& op, std::string_view mode) {
  require_scalars(op);
  const DType t = type(op.results[0]).dtype;
  if (ir::dtype_bytes(t) != 4) unsupported(op, "on " + std::string(ir::dtype_name(t)) + " values");
  line(ptx::shuffle(mode) + " " + out(op) + ", " + in(op, 0) + ", " + in(op, 1) + ", " +
       std::string(ptx::kWarpClamp) + ", " + std::string(ptx::kFullWarpMask) + ";");
}

void PtxWriter::warp_reduction(const ir::Op& op) {
  require_scalars(op);
  const DType t = type(op.results[0]).dtype;
  if (ir::dtype_bytes(t) != 4) unsupported(op, "on " + std::string(ir::dtype_name(t)) + " values");
  const std::string s = suffix(op, t);
  const std::string combine = op.kind == OpKind::SimdSum   ? "add." + s
                              : op.kind == OpKind::SimdMax ? "max." + s
                                                           : "min." + s;
  const std::string d = out(op), other = temp(ptx::register_type(t));
  line("mov." + std::string(ptx::bits_suffix(t)) + " " + d + ", " + in(op, 0) + ";");
  for (int offset = 16; offset > 0; offset /= 2) {
    line(ptx::shuffle("bfly") + " " + other + ", " + d + ", " + std::to_string(offset) + ", " +
         std::string(ptx::kWarpClamp) + ", " + std::string(ptx::kFullWarpMask) + ";");
    line(combine + " " + d + ", " + d + ", " + other + ";");
  }
}

}  // namespace metile::codegen::ptx
