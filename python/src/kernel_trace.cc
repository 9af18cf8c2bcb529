#include "kernel_trace.h"

#include "metile/ir/types.h"
#include "metile/support/errors.h"

namespace metile::python {

ir::DType dtype_from_name(const std::string& name) {
  if (std::optional<ir::DType> t = ir::parse_dtype(name)) return *t;
  throw UserError("dtype: unknown dtype '" + name +
                  "' (expected f16, bf16, f32, i32, u32, i64 or i1)");
}

KernelTrace::KernelTrace(const std::string& name) : builder_(kernel_) {
  kernel_.dialect = ir::Dialect::Tile;
  kernel_.name = name;
}

void KernelTrace::check_open() const {
  METILE_ASSERT(!finished_, "the trace of kernel " + kernel_.name + " has finished");
}

ir::TileBuilder& KernelTrace::builder() {
  check_open();
  return builder_;
}

ir::ValueId KernelTrace::add_buffer(const std::string& name, const std::string& dtype) {
  ir::DType t = dtype_from_name(dtype);
  if (t == ir::DType::i1) throw UserError("buffer '" + name + "': i1 buffers are not supported");
  // The access is provisional: set_param_access records what the body did with it.
  return builder().add_param(name, ir::Type::ptr(t), "read");
}

ir::ValueId KernelTrace::add_scalar(const std::string& name, const std::string& dtype) {
  return builder().add_param(name, ir::Type::scalar(dtype_from_name(dtype)));
}

void KernelTrace::set_attr(const std::string& name, ir::Attr value) {
  check_open();
  kernel_.attrs[name] = std::move(value);
}

void KernelTrace::set_param_access(int index, const std::string& access) {
  check_open();
  METILE_ASSERT(index >= 0 && index < static_cast<int>(kernel_.params.size()),
                "no parameter " + std::to_string(index));
  kernel_.params[index].access = access;
}

bool KernelTrace::set_tensor_access(ir::ValueId descriptor, const std::string& access) {
  check_open();
  bool found = false;
  ir::walk(kernel_.body, [&](ir::Op& op) {
    if (op.kind == ir::OpKind::MakeTensor && op.results[0] == descriptor) {
      op.attrs["access"] = access;
      found = true;
    }
  });
  return found;
}

ir::Kernel KernelTrace::finish() {
  check_open();
  METILE_ASSERT(builder_.open_regions() == 0, "a region of kernel " + kernel_.name + " is open");
  finished_ = true;
  return std::move(kernel_);
}

}  // namespace metile::python
