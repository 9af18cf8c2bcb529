// Words for a kernel's memory faults: which buffer (or threadgroup memory, or stack) the
// faulting address belongs to, and how far outside it lies.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "metile/runtime/host/fault_trap.h"
#include "metile/runtime/host/launch_plan.h"

namespace metile::runtime::host {

class HostBufferStorage;

struct BufferArg {
  std::size_t index;  // the kernel parameter
  std::string name;
  HostBufferStorage* storage;
};

// "out-of-bounds access in kernel 'k' (threadgroup (3,0,0), thread 17): the access at
//  byte offset 4096 is past the end of buffer 2 ('out', 4096 bytes)"
std::string describe_fault(const FaultTrap& trap, const LaunchPlan& plan, const Dim3& position,
                           unsigned thread, std::span<const BufferArg> buffers);

// A write into the (< 16 byte) slack between a buffer's end and its guard page, found
// after the launch.
std::string describe_slack_write(const LaunchPlan& plan, const BufferArg& buffer,
                                 std::ptrdiff_t offset);

}  // namespace metile::runtime::host
