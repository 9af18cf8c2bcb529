// Metal IR's own rules: per-thread types only (no tiles, no descriptors), the kernel's
// threadgroup geometry, and threadgroup buffers inside the threadgroup block.
#include "metile/ir/verifier.h"

namespace metile::ir::verifier_detail {

namespace {

void check_type(Checker& c, const Op* definer, ValueId v) {
  const Type& t = c.type(v);
  if (t.is_tile()) return c.report(definer, "tiles do not exist in Metal IR", {v});
  if (t.is_desc()) return c.report(definer, "tensor descriptors do not exist in Metal IR", {v});
  if (t.is_vector() && t.shape[0] != 2 && t.shape[0] != 4)
    c.report(definer, "vectors have 2 or 4 elements", {v});
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

}  // namespace

std::vector<Diagnostic> verify_metal(const Kernel& k) {
  DialectRules rules;
  rules.check_type = check_type;
  rules.check_op = [](Checker& c, const Op& op) {
    if (op.kind == OpKind::ThreadgroupBuffer) check_threadgroup_buffer(c, op);
  };
  rules.check_kernel = check_kernel;
  return verify_with(k, rules);
}

}  // namespace metile::ir::verifier_detail
