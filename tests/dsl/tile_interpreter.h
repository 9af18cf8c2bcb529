// A reference interpreter of Tile IR for the DSL tests: runs a traced kernel program by
// program, one whole tile at a time; scalar ops element by element through the core's scalar
// evaluator (metile/ir/scalar_eval.h), reductions in double precision rounded once. It checks
// every memory access and knows only the ops the library kernels use; it is the independent
// check of what the DSL builds, not a fast executor.
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

// x as a value of dtype: floats rounded to nearest (ties to even; overflow to infinity),
// integers truncated and wrapped to the dtype's width.
double round_to(ir::DType dtype, double x);

}  // namespace metile::test
