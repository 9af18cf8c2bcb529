// Words for a kernel's memory faults: which buffer (or threadgroup memory, or stack) the
// faulting address belongs to, how far outside it lies, and the kernel's source line of
// the faulting instruction where the line tables map it back.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "metile/runtime/host/fault_trap.h"
#include "metile/runtime/host/launch_plan.h"
#include "metile/runtime/kernel_errors.h"

namespace metile::runtime::host {

class HostBufferStorage;

struct BufferArg {
  std::size_t index;  // the kernel parameter
  std::string name;
  HostBufferStorage* storage;
};

// "kernel.py:12: out-of-bounds access in kernel 'k' (threadgroup (3,0,0), thread 17): the
//  access at byte offset 4096 is past the end of buffer 2 ('out', 4096 bytes)"; without the
//  thread when it is unknown (a work-group function).
KernelFaultError fault_error(const FaultTrap& trap, const LaunchPlan& plan, const Dim3& position,
                             std::optional<unsigned> thread, std::span<const BufferArg> buffers);

// A write into the (< 16 byte) slack between a buffer's end and its guard page, found
// after the launch.
KernelFaultError slack_write_error(const LaunchPlan& plan, const BufferArg& buffer,
                                   std::ptrdiff_t offset);

// The user's source line of the kernel instruction at `pc`: that of the innermost emitted
// line the ABI's line table knows. Unknown when the line tables cannot map it; then
// " (emitted line N)" is appended to `message` when the emitted line is known.
SourceLocation source_line_of(const LaunchPlan& plan, std::uintptr_t pc, std::string& message);

}  // namespace metile::runtime::host
