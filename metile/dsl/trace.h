// Tracing a C++ kernel function into Tile IR.
//
//   void vector_add(KernelContext& k) {
//     auto x = k.buffer("x", f32, "read");
//     ...
//   }
//   ir::Kernel kernel = trace("vector_add", vector_add, {{"BLOCK", 256}});
//
// The kernel function runs once; every DSL operation it performs appends Tile IR to the
// kernel. Constexprs are specialisation values: each one the function asks for is
// recorded in kernel.attrs, so different constexprs give different kernels.
#pragma once

#include <functional>
#include <string>

#include "metile/dsl/constexprs.h"
#include "metile/dsl/value.h"
#include "metile/ir/ir.h"

namespace metile::dsl {

namespace detail {
struct TraceState;
}

// What a kernel function receives: declares parameters and reads constexprs.
class KernelContext {
 public:
  explicit KernelContext(detail::TraceState& state) : state_(state) {}

  // A device buffer parameter; access is "read", "write" or "read_write", and the body
  // must keep to it. Without an access (or with ""), the buffer takes the access the body
  // implies: read_write when it both loads and stores, write, or read (docs/cpp_dsl.md).
  Ptr buffer(const std::string& name, DType dtype, const std::string& access,
             Here here = Here::current());
  Ptr buffer(const std::string& name, DType dtype, Here here = Here::current());
  // A scalar parameter (uniform across the launch).
  Scalar scalar(const std::string& name, DType dtype, Here here = Here::current());

  // A constexpr given to trace(); a UserError names it when it is missing.
  int64_t constexpr_int(const std::string& name, Here here = Here::current());
  double constexpr_float(const std::string& name, Here here = Here::current());
  // The same with a default used when trace() was not given the name.
  int64_t constexpr_int(const std::string& name, int64_t default_value,
                        Here here = Here::current());
  double constexpr_float(const std::string& name, double default_value,
                         Here here = Here::current());

  // Threads per threadgroup requested by the author (kernel attribute num_threads), read
  // by the thread planner.
  void set_num_threads(int64_t n, Here here = Here::current());

  const std::string& kernel_name() const;

 private:
  const ConstexprValue* lookup(const std::string& name, const Here& here);
  void record(const std::string& name, const ConstexprValue& v);
  detail::TraceState& state_;
};

using KernelFunction = std::function<void(KernelContext&)>;

// Runs `fn` once and returns the Tile IR kernel it built. Every constexpr in
// `constexprs` must be asked for by the kernel (a misspelt name is a UserError).
ir::Kernel trace(const std::string& name, const KernelFunction& fn,
                 const Constexprs& constexprs = {}, Here here = Here::current());

// Host-side helpers for grid and block arithmetic.
constexpr int64_t cdiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}
constexpr int64_t next_power_of_2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

}  // namespace metile::dsl
