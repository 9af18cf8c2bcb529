// Errors a kernel raises while it runs: it broke a rule of the execution model. They are
// user errors (the kernel is wrong, not the runtime), and each message names the kernel,
// the threadgroup and the threads involved.
#pragma once

#include "metile/support/errors.h"

namespace metile::runtime {

class KernelExecutionError : public UserError {
 public:
  using UserError::UserError;
};

// Threads of one threadgroup (or SIMD group) did not all reach the same barrier or SIMD
// collective: some exited, or waited elsewhere.
class DivergentBarrierError : public KernelExecutionError {
 public:
  using KernelExecutionError::KernelExecutionError;
};

// The kernel touched memory it does not own, read a SIMD lane that does not exist,
// divided an integer by zero or overflowed its stack.
class KernelFaultError : public KernelExecutionError {
 public:
  using KernelExecutionError::KernelExecutionError;
};

}  // namespace metile::runtime
