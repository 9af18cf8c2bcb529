// Small Metal IR kernels built by hand, as lowering would produce them: the inputs of the
// emitter's golden and behaviour tests.
#pragma once

#include <string>
#include <vector>

#include "metile/ir/builder.h"

namespace metile::codegen::testing {

// ir::Builder with shorthands for the ops the test kernels use.
class MetalBuilder : public ir::Builder {
 public:
  explicit MetalBuilder(ir::Kernel& k) : ir::Builder(k) {}

  ir::ValueId i32(int64_t v);
  ir::ValueId f32(double v);
  ir::ValueId constant(double v, ir::DType t);
  ir::ValueId thread_index();
  ir::ValueId threadgroup_index();
  ir::ValueId op(ir::OpKind kind, ir::ValueId a, ir::ValueId b);  // result: a's type
  ir::ValueId unary(ir::OpKind kind, ir::ValueId a, bool fast = false);
  ir::ValueId cmp(const std::string& pred, ir::ValueId a, ir::ValueId b);
  ir::ValueId ptr_add(ir::ValueId p, ir::ValueId i);
  ir::ValueId load(ir::ValueId p, ir::ValueId mask = ir::kNoValue,
                   ir::ValueId other = ir::kNoValue);
  ir::ValueId load_vec(ir::ValueId p, int64_t width);
  void store(ir::ValueId p, ir::ValueId v, ir::ValueId mask = ir::kNoValue);
  void barrier(const std::string& scope, const std::string& mem);
  // Gives v a name hint; returns v.
  ir::ValueId named(ir::ValueId v, const std::string& name);
};

// An empty Metal IR kernel with its geometry attributes.
ir::Kernel metal_kernel(const std::string& name, int64_t threads, int64_t threadgroup_bytes);

// out[i] = x[i] + y[i] for i < n, one element per thread, masked tail.
ir::Kernel vector_add_kernel();
// out[0] = sum of x[0..n) over one threadgroup of 64 threads: simd_sum, threadgroup scratch,
// barriers.
ir::Kernel reduction_kernel();
// out[0], out[1] = the n-th and (n+1)-th Fibonacci numbers from a loop carrying (a, b) ->
// (b, a + b), and a count carried alongside unchanged-or-not.
ir::Kernel fibonacci_kernel();
// out[i] = (i < n) ? 2 * x[i] + i : -1: an if with two results.
ir::Kernel if_results_kernel();
// half and bfloat buffers with math in float, conversions and narrow constants.
ir::Kernel half_bfloat_kernel();
// Four floats per thread through vec<4xf32> loads and stores, a per-element select.
ir::Kernel vec4_kernel();
// Four floats per thread, converted to half, through guarded packed accesses (the form
// group_vector_accesses produces): packed_load, extract, packed_store and is_aligned.
ir::Kernel packed_kernel();
// i8 and u8 buffers: 8-bit arithmetic that wraps, a masked load with `other`, shifts,
// floordiv, min/max/abs, a shuffle and a SIMD sum (through int), and saturating float
// conversions.
ir::Kernel bytes_kernel();
// fp8 and i16: an fp8 masked load with an fp8 `other`, conversions from f32, f16 and the
// other fp8 format (the prelude's helpers), a shuffle and selects of the bytes, back to f32,
// a saturating f32 -> i16 conversion and a 16-bit add that wraps.
ir::Kernel float8_kernel();

struct NamedKernel {
  std::string name;
  ir::Kernel (*build)();
};
// The golden set, in a fixed order.
const std::vector<NamedKernel>& golden_kernels();
// The golden set without the kernels CUDA cannot express (vec4: vector values).
std::vector<NamedKernel> cuda_golden_kernels();

}  // namespace metile::codegen::testing
