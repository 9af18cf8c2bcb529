// The C++ half of the Python tracer: one kernel being traced, owning its Tile IR and the
// TileBuilder that validates every op. Python proxies hold the ValueIds it returns. Names
// cross the boundary as text ("f32", "add", "lt") so the Python side needs no enums.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "metile/ir/builder.h"
#include "metile/ir/ir.h"

namespace metile::python {

// A dtype name ("f32") as a DType; UserError listing the known names when it is unknown.
ir::DType dtype_from_name(const std::string& name);

class KernelTrace {
 public:
  explicit KernelTrace(const std::string& name);
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;

  ir::TileBuilder& builder();
  const ir::Type& type(ir::ValueId v) const { return kernel_.type(v); }
  // The id the next value will get: values with ids in [a, b) were made between two calls.
  ir::ValueId next_value_id() const { return static_cast<ir::ValueId>(kernel_.types.size()); }

  ir::ValueId add_buffer(const std::string& name, const std::string& dtype);
  ir::ValueId add_scalar(const std::string& name, const std::string& dtype);
  // Kernel attributes: the constexpr values the kernel was specialised with.
  void set_attr(const std::string& name, ir::Attr value);

  // Fixes accesses the tracer inferred after the body ran: a buffer parameter's access and
  // the access of the descriptors made over it without an explicit one. A descriptor made
  // in an abandoned loop trace no longer exists: set_tensor_access then returns false.
  void set_param_access(int index, const std::string& access);
  bool set_tensor_access(ir::ValueId descriptor, const std::string& access);

  // Ends the trace and hands the kernel over; the trace cannot be used afterwards.
  ir::Kernel finish();

 private:
  void check_open() const;

  ir::Kernel kernel_;
  ir::TileBuilder builder_;
  bool finished_ = false;
};

}  // namespace metile::python
