// The types of the asynchronous pipeline ops (ops.def's AsyncPipeline rule): mbarriers are i64
// in threadgroup memory, copies and multiplies read and write threadgroup memory, parities and
// coordinates are i32, wgmma_mma carries n/2 f32 accumulator registers, and async_copy moves at
// most 16 bytes from device to threadgroup memory.
#include "metile/ir/verifier.h"

namespace metile::ir::verifier_detail {

namespace {

bool threadgroup_pointer(const Type& t) {
  return t.is_pointer() && !t.is_tile() && t.space == AddressSpace::Threadgroup;
}

void check_barrier_operand(Checker& c, const Op& op, size_t i) {
  const Type& t = c.type(op.operands[i]);
  if (!threadgroup_pointer(t) || t.dtype != DType::i64)
    c.report(&op, "the mbarrier must be a threadgroup pointer to i64", {op.operands[i]});
}

void check_i32(Checker& c, const Op& op, size_t first, size_t count, const std::string& what) {
  for (size_t i = first; i < first + count; ++i)
    if (c.type(op.operands[i]) != Type::scalar(DType::i32))
      c.report(&op, what + " must be i32 scalars", {op.operands[i]});
}

void check_wgmma(Checker& c, const Op& op) {
  const size_t b_at = wgmma_b_operand(op);
  if (op.operands.size() <= b_at) return c.report(&op, "a and b come before the accumulator");
  const Type& b = c.type(op.operands[b_at]);
  if (!threadgroup_pointer(b) || (b.dtype != DType::f16 && b.dtype != DType::bf16))
    return c.report(&op, "b must be a threadgroup pointer to f16 or bf16", {op.operands[b_at]});
  for (size_t i = 0; i < b_at; ++i)
    if (b_at == 1 ? c.type(op.operands[i]) != b : c.type(op.operands[i]) != Type::scalar(b.dtype))
      return c.report(&op,
                      b_at == 1 ? "a and b must be threadgroup pointers of one dtype"
                                : "a's register elements must be scalars of b's dtype",
                      {op.operands[i]});
  const int64_t n = op.int_attr("n");
  if (n < 8 || n > 256 || n % 8 != 0) return c.report(&op, "n must be a multiple of 8 in [8, 256]");
  const size_t first = b_at + 1;
  if (op.results.size() != static_cast<size_t>(n / 2) ||
      op.operands.size() != op.results.size() + first)
    return c.report(&op, "the accumulator is n/2 = " + std::to_string(n / 2) +
                             " f32 registers per thread, as operands and as results");
  for (size_t i = 0; i < op.results.size(); ++i)
    if (c.type(op.operands[first + i]) != Type::scalar(DType::f32) ||
        c.type(op.results[i]) != Type::scalar(DType::f32))
      return c.report(&op, "accumulator registers must be f32 scalars",
                      {op.operands[first + i], op.results[i]});
}

// async_copy: a threadgroup destination and a device source of one dtype, an i1 predicate,
// and 1, 2, 4 or 8 elements of at most 16 bytes.
void check_async_copy(Checker& c, const Op& op) {
  const Type& dst = c.type(op.operands[0]);
  const Type& src = c.type(op.operands[1]);
  if (!threadgroup_pointer(dst) || !src.is_pointer() || src.is_tile() ||
      src.space != AddressSpace::Device || src.dtype != dst.dtype)
    return c.report(&op, "copies from a device pointer to a threadgroup pointer of one dtype",
                    {op.operands[0], op.operands[1]});
  if (op.operands.size() == 3 && c.type(op.operands[2]) != Type::scalar(DType::i1))
    return c.report(&op, "the predicate must be an i1 scalar", {op.operands[2]});
  const int64_t elements = op.int_attr("elements");
  if ((elements != 1 && elements != 2 && elements != 4 && elements != 8) ||
      elements * dtype_bytes(dst.dtype) > 16)
    c.report(&op, "copies 1, 2, 4 or 8 elements of at most 16 bytes");
}

}  // namespace

void check_async_op(Checker& c, const Op& op) {
  const OpKind k = op.kind;
  if (k == OpKind::MbarrierInit || k == OpKind::MbarrierArrive ||
      k == OpKind::MbarrierArriveExpectTx)
    return check_barrier_operand(c, op, 0);
  if (k == OpKind::MbarrierWait) {
    check_barrier_operand(c, op, 0);
    return check_i32(c, op, 1, 1, "the parity");
  }
  if (k == OpKind::TmaLoad) {
    if (!threadgroup_pointer(c.type(op.operands[0])))
      c.report(&op, "the destination must be a threadgroup pointer", {op.operands[0]});
    check_barrier_operand(c, op, 1);
    return check_i32(c, op, 2, 2, "the coordinates");
  }
  if (k == OpKind::WgmmaMma) return check_wgmma(c, op);
  if (k == OpKind::AsyncCopy) return check_async_copy(c, op);
  if (k == OpKind::WgmmaWait) {
    if (op.operands.size() != op.results.size())
      return c.report(&op, "the accumulator registers come back one result per operand");
    for (size_t i = 0; i < op.results.size(); ++i)
      if (c.type(op.operands[i]) != Type::scalar(DType::f32) ||
          c.type(op.results[i]) != Type::scalar(DType::f32))
        return c.report(&op, "accumulator registers must be f32 scalars",
                        {op.operands[i], op.results[i]});
  }
  // The fences, commit, wait and setmaxnreg have no operands; their attributes are checked.
}

}  // namespace metile::ir::verifier_detail
