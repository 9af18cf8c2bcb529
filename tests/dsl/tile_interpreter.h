// A reference interpreter of Tile IR for the DSL tests: runs a traced kernel program by
// program, one whole tile at a time, in double precision with results rounded to their
// dtype. It checks every memory access and knows only the ops the library kernels use;
// it is the independent check of what the DSL builds, not a fast executor.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::test {

struct HostBuffer {
  ir::DType dtype;
  std::vector<double> data;  // values already rounded to dtype
};

// A kernel argument: a buffer (by index into the buffers) or a scalar.
struct BufferArg {
  int index;
};
using Arg = std::variant<BufferArg, int64_t, double>;

// Runs programs 0 .. grid - 1 of `kernel` with `args` in parameter order.
void run_tile_ir(const ir::Kernel& kernel, int64_t grid, const std::vector<Arg>& args,
                 std::vector<HostBuffer>& buffers);

// x rounded to the nearest value of dtype (ties to even; overflow to infinity).
double round_to(ir::DType dtype, double x);

}  // namespace metile::test
