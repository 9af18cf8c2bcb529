#include "metile/kernels/vector_add.h"

#include "metile/dsl/dsl.h"
#include "metile/kernels/storage_dtype.h"

namespace metile::kernels {

using namespace metile::dsl;

ir::Kernel vector_add(ir::DType dtype, int64_t block) {
  check_storage_dtype("vector_add", dtype);
  auto body = [dtype](KernelContext& k) {
    auto x = k.buffer("x", dtype, "read");
    auto y = k.buffer("y", dtype, "read");
    auto out = k.buffer("out", dtype, "write");
    auto n = k.scalar("n", i32);
    const int64_t BLOCK = k.constexpr_int("BLOCK");
    // One op-making operand per statement: C++ leaves the order of operands unspecified.
    auto lanes = arange(0, BLOCK);
    auto offs = program_id(0) * BLOCK + lanes;
    auto mask = offs < n;
    auto y_vals = load(y + offs, mask);
    auto x_vals = load(x + offs, mask);
    auto total = x_vals + y_vals;
    store(out + offs, total, mask);
  };
  return trace(kernel_name("vector_add", dtype), body, {{"BLOCK", block}});
}

}  // namespace metile::kernels
