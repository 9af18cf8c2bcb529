// Metal IR's own rules: per-thread types only (no tiles, no descriptors), the kernel's
// threadgroup geometry, threadgroup buffers inside the threadgroup block, the packed
// vector accesses' types and the matrix fragment ops' types.
#include "metile/ir/verifier.h"

namespace metile::ir::verifier_detail {

namespace {

void check_type(Checker& c, const Op* definer, ValueId v) {
  const Type& t = c.type(v);
  if (t.is_tile()) return c.report(definer, "tiles do not exist in Metal IR", {v});
  if (t.is_desc()) return c.report(definer, "tensor descriptors do not exist in Metal IR", {v});
  if (t.is_vector() && t.shape[0] != 2 && t.shape[0] != 4 && t.shape[0] != 8)
    c.report(definer, "vectors have 2, 4 or 8 elements", {v});
  check_matrix_type(c, definer, v, true);
}

const int64_t* kernel_int(const Kernel& k, const std::string& name) {
  auto it = k.attrs.find(name);
  return it == k.attrs.end() ? nullptr : std::get_if<int64_t>(&it->second);
}

void check_kernel(Checker& c) {
  const int64_t* threads = kernel_int(c.kernel(), "threads_per_threadgroup");
  if (!threads || *threads <= 0)
    c.report(nullptr, "needs a positive integer attribute threads_per_threadgroup");
  const int64_t* bytes = kernel_int(c.kernel(), "threadgroup_bytes");
  if (!bytes || *bytes < 0 || *bytes % 16 != 0)
    c.report(nullptr,
             "needs an integer attribute threadgroup_bytes, non-negative and a multiple of 16");
}

void check_threadgroup_buffer(Checker& c, const Op& op) {
  const Type& t = c.type(op.results[0]);
  if (!t.is_pointer() || t.space != AddressSpace::Threadgroup)
    return c.report(&op, "the result must be a threadgroup pointer", op.results);
  const int64_t offset = op.int_attr("offset");
  const int64_t size = op.int_attr("size");
  const int64_t elem = dtype_bytes(t.dtype);
  if (offset < 0 || size <= 0 || offset % elem != 0)
    return c.report(&op,
                    "offset " + std::to_string(offset) + " and size " + std::to_string(size) +
                        " must be non-negative, positive, and the offset aligned to " +
                        std::to_string(elem) + " bytes",
                    op.results);
  const int64_t* bytes = kernel_int(c.kernel(), "threadgroup_bytes");
  if (bytes && offset + size * elem > *bytes)
    c.report(&op,
             "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + size * elem) +
                 ") exceed threadgroup_bytes = " + std::to_string(*bytes),
             op.results);
}

bool is_device_pointer(const Type& t) {
  return t.is_pointer() && t.space == AddressSpace::Device;
}

void check_packed_load(Checker& c, const Op& op) {
  const Type& p = c.type(op.operands[0]);
  const Type& v = c.type(op.results[0]);
  if (!is_device_pointer(p))
    return c.report(&op, "the address must be a device pointer", {op.operands[0]});
  if (!v.is_vector() || v.dtype != p.dtype)
    c.report(&op,
             "the result must be a vector of the pointee dtype " + std::string(dtype_name(p.dtype)),
             {op.results[0], op.operands[0]});
}

void check_packed_store(Checker& c, const Op& op) {
  const Type& p = c.type(op.operands[0]);
  if (!is_device_pointer(p))
    return c.report(&op, "the address must be a device pointer", {op.operands[0]});
  const size_t width = op.operands.size() - 1;
  if (width != 2 && width != 4 && width != 8)
    return c.report(&op, "stores 2, 4 or 8 values, got " + std::to_string(width));
  for (size_t i = 1; i < op.operands.size(); ++i)
    if (c.type(op.operands[i]) != Type::scalar(p.dtype))
      return c.report(
          &op,
          "every value must be a scalar of the pointee dtype " + std::string(dtype_name(p.dtype)),
          {op.operands[i], op.operands[0]});
}

void check_extract(Checker& c, const Op& op) {
  const Type& v = c.type(op.operands[0]);
  if (!v.is_vector()) return c.report(&op, "the operand must be a vector", {op.operands[0]});
  if (c.type(op.results[0]) != Type::scalar(v.dtype))
    return c.report(&op, "the result must be the vector's element type",
                    {op.results[0], op.operands[0]});
  const int64_t index = op.int_attr("index");
  if (index < 0 || index >= v.shape[0])
    c.report(
        &op,
        "index " + std::to_string(index) + " is outside [0, " + std::to_string(v.shape[0]) + ")",
        {op.operands[0]});
}

void check_pack(Checker& c, const Op& op) {
  const Type& v = c.type(op.results[0]);
  if (!v.is_vector()) return c.report(&op, "the result must be a vector", op.results);
  if (static_cast<int64_t>(op.operands.size()) != v.shape[0])
    return c.report(&op,
                    "a vector of " + std::to_string(v.shape[0]) +
                        " elements needs as many operands, got " +
                        std::to_string(op.operands.size()),
                    op.results);
  for (ValueId e : op.operands)
    if (c.type(e) != Type::scalar(v.dtype))
      return c.report(&op, "each operand must be the vector's element type", {e, op.results[0]});
}

void check_is_aligned(Checker& c, const Op& op) {
  if (!c.type(op.operands[0]).is_pointer())
    return c.report(&op, "the operand must be a pointer", {op.operands[0]});
  if (c.type(op.results[0]) != Type::scalar(DType::i1))
    return c.report(&op, "the result must be i1", op.results);
  const int64_t bytes = op.int_attr("bytes");
  if (bytes <= 0 || (bytes & (bytes - 1)) != 0)
    c.report(&op, "bytes must be a positive power of two, got " + std::to_string(bytes));
}

void check_matrix_fill(Checker& c, const Op& op) {
  const Type& m = c.type(op.results[0]);
  if (!m.is_matrix()) return c.report(&op, "the result must be a matrix fragment", op.results);
  if (c.type(op.operands[0]) != Type::scalar(m.dtype))
    c.report(
        &op,
        "the value must be a scalar of the fragment's dtype " + std::string(dtype_name(m.dtype)),
        {op.operands[0], op.results[0]});
}

// matrix_load's (p, offset, stride) or matrix_store's (m, p, offset, stride) against the
// fragment m.
void check_matrix_access(Checker& c, const Op& op, ValueId matrix, size_t first) {
  const Type& m = c.type(matrix);
  if (!m.is_matrix()) return c.report(&op, "the fragment must be a matrix", {matrix});
  if (m.dtype == DType::i1) return c.report(&op, "i1 fragments have no memory form", {matrix});
  const ValueId p = op.operands[first];
  if (!c.type(p).is_pointer() || c.type(p).dtype != m.dtype)
    return c.report(
        &op,
        "the address must be a pointer to the fragment's dtype " + std::string(dtype_name(m.dtype)),
        {p, matrix});
  for (size_t i = first + 1; i < first + 3; ++i)
    if (!is_integer_scalar(c.type(op.operands[i])))
      c.report(&op, "the offset and the row stride must be integer scalars", {op.operands[i]});
}

std::string dims_of(const Type& t) {
  return std::to_string(t.shape[0]) + "x" + std::to_string(t.shape[1]);
}

// 8x8 by 8x8 into 8x8, or mma.sync's m16n8k16: a 16x16 by a 16x8 into a 16x8.
void check_matrix_mma(Checker& c, const Op& op) {
  const Type& a = c.type(op.operands[0]);
  const Type& b = c.type(op.operands[1]);
  if (!a.is_matrix() || !b.is_matrix() || a.dtype != b.dtype || !is_float(a.dtype))
    return c.report(&op, "a and b must be floating-point fragments of one dtype",
                    {op.operands[0], op.operands[1]});
  const bool native = a.shape == std::vector<int64_t>{16, 16};
  if (b.shape != (native ? std::vector<int64_t>{16, 8} : a.shape))
    return c.report(&op, "a and b must be 8x8 fragments, or a 16x16 a and a 16x8 b",
                    {op.operands[0], op.operands[1]});
  const Type accumulator = native ? Type::matrix(DType::f32, 16, 8) : Type::matrix(DType::f32);
  if (c.type(op.operands[2]) != accumulator || c.type(op.results[0]) != accumulator)
    return c.report(
        &op,
        "the accumulator c and the result must be f32 fragments of shape " + dims_of(accumulator),
        {op.operands[2], op.results[0]});
  if (op.has_attr("precision") && op.str_attr("precision") == "tf32" && a.dtype != DType::f32)
    c.report(&op, "tf32 precision applies to f32 operands only", {op.operands[0]});
}

}  // namespace

void check_matrix_type(Checker& c, const Op* definer, ValueId v, bool native_mma_shapes) {
  const Type& t = c.type(v);
  if (!t.is_matrix()) return;
  if (t.pointer || is_integer(t.dtype) || is_fp8(t.dtype) || t.dtype == DType::f64)
    return c.report(definer, "matrix fragments are of f16, bf16, f32 or i1", {v});
  if (t.shape == std::vector<int64_t>{8, 8}) return;
  if (!native_mma_shapes)
    return c.report(definer, "matrix fragments are 8x8 of f16, bf16, f32 or i1", {v});
  // mma.sync's m16n8k16 operands: a 16x16 (A) or 16x8 (B) of a 16-bit float, a 16x8 f32 (C).
  const bool sixteen_bit = t.dtype == DType::f16 || t.dtype == DType::bf16;
  const bool operand = sixteen_bit && (t.shape == std::vector<int64_t>{16, 16} ||
                                       t.shape == std::vector<int64_t>{16, 8});
  const bool accumulator = t.dtype == DType::f32 && t.shape == std::vector<int64_t>{16, 8};
  if (!operand && !accumulator)
    c.report(definer,
             "matrix fragments are 8x8, or mma.sync's 16x16 and 16x8 of f16 or bf16 and 16x8 of "
             "f32",
             {v});
}

// assert (active, cond, thread) and print (active, v...): i1 scalar flags, an i32 thread,
// scalar values.
void check_debug_op(Checker& c, const Op& op) {
  const Type i1 = Type::scalar(DType::i1);
  for (size_t i = 0; i < op.operands.size(); ++i) {
    const Type& t = c.type(op.operands[i]);
    const bool flag = i == 0 || (op.kind == OpKind::AssertTrue && i == 1);
    const bool thread = op.kind == OpKind::AssertTrue && i == 2;
    if (flag ? t != i1 : thread ? t != Type::scalar(DType::i32) : !t.is_scalar())
      c.report(&op, std::string(flag     ? "takes i1 scalar flags"
                                : thread ? "takes the thread as an i32 scalar"
                                         : "prints scalars of numbers") +
                        ", got " + t.str() + " for operand " + std::to_string(i));
  }
}

void check_matrix_op(Checker& c, const Op& op) {
  if (op.kind == OpKind::MatrixFill) check_matrix_fill(c, op);
  if (op.kind == OpKind::MatrixLoad) check_matrix_access(c, op, op.results[0], 0);
  if (op.kind == OpKind::MatrixStore) check_matrix_access(c, op, op.operands[0], 1);
  if (op.kind == OpKind::MatrixMma) check_matrix_mma(c, op);
}

std::vector<Diagnostic> verify_metal(const Kernel& k) {
  DialectRules rules;
  rules.check_type = check_type;
  rules.check_op = [](Checker& c, const Op& op) {
    if (op.kind == OpKind::ThreadgroupBuffer) check_threadgroup_buffer(c, op);
    if (op.kind == OpKind::PackedLoad) check_packed_load(c, op);
    if (op.kind == OpKind::PackedStore) check_packed_store(c, op);
    if (op.kind == OpKind::Extract) check_extract(c, op);
    if (op.kind == OpKind::Pack) check_pack(c, op);
    if (op.kind == OpKind::IsAligned) check_is_aligned(c, op);
    if (op.kind == OpKind::AssertTrue || op.kind == OpKind::Print) check_debug_op(c, op);
    check_matrix_op(c, op);
    if (op_info(op.kind).rule == TypeRule::AsyncPipeline) check_async_op(c, op);
  };
  rules.check_kernel = check_kernel;
  return verify_with(k, rules);
}

}  // namespace metile::ir::verifier_detail
