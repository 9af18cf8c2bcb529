// Tensor descriptors: a buffer seen as a bounds-checked 1-3-D array.
//
//   auto x = tensor(x_ptr, {n_rows, n_cols}, {row_stride, 1}, "read");
//   auto v = x.load({row, cols});       // out-of-bounds elements read 0
//   y.store({row, cols}, v * 2.0f);     // out-of-bounds elements are not written
#pragma once

#include <string>
#include <vector>

#include "metile/dsl/value.h"

namespace metile::dsl {

class Tensor {
 public:
  explicit Tensor(Value descriptor) : descriptor_(descriptor) {}

  // The elements at the coordinates (scalars or tiles, broadcast together).
  Value load(const std::vector<Operand>& coords, Here here = Here::current()) const;
  void store(const std::vector<Operand>& coords, const Operand& value,
             Here here = Here::current()) const;
  const Value& descriptor() const { return descriptor_; }

 private:
  Value descriptor_;
};

// A descriptor over `base` (a device buffer). Empty strides mean row-major contiguous;
// an empty access takes the access of the buffer parameter `base` derives from
// (read_write when it derives from several with different accesses). Loads and stores
// through the descriptor must fit the access it was given.
Tensor tensor(const Value& base, const std::vector<Operand>& shape,
              const std::vector<Operand>& strides = {}, const std::string& access = "",
              Here here = Here::current());

}  // namespace metile::dsl
