// Errors a kernel raises while it runs: it broke a rule of the execution model. They are
// user errors (the kernel is wrong, not the runtime), and each message names the kernel,
// the threadgroup and the threads involved.
#pragma once

#include <array>
#include <optional>
#include <string>

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
// Where a kernel faulted, as far as it is known; the user's source line is the error's
// where().
struct FaultSite {
  std::string kernel;
  std::array<unsigned, 3> threadgroup{0, 0, 0};
  std::optional<unsigned> thread;        // unknown for a write found after the launch
  std::string buffer;                    // the buffer parameter's name, "" when not in a buffer
  std::optional<long long> byte_offset;  // into the buffer, or into threadgroup memory
};

class KernelFaultError : public KernelExecutionError {
 public:
  explicit KernelFaultError(std::string what, SourceLocation where = {}, FaultSite site = {})
      : KernelExecutionError(std::move(what), std::move(where)), site_(std::move(site)) {}
  const FaultSite& site() const { return site_; }

 private:
  FaultSite site_;
};

}  // namespace metile::runtime
