#include "metile/runtime/host/fault_report.h"

#include <cstdio>

#include "metile/runtime/host/fiber_stack_pool.h"
#include "metile/runtime/host/host_device.h"

namespace metile::runtime::host {

namespace {

std::string describe_buffer(const BufferArg& b) {
  return "buffer " + std::to_string(b.index) + " ('" + b.name + "', " +
         std::to_string(b.storage->size_bytes()) + " bytes)";
}

// "the access at byte offset N is past the end of <what>"
std::string relative_position(std::uintptr_t address, const RegionInfo& region,
                              const std::string& what) {
  const auto begin = reinterpret_cast<std::uintptr_t>(region.data);
  const long long offset = static_cast<long long>(address - begin);
  const char* where = address < begin                  ? "is before the start of"
                      : address >= begin + region.size ? "is past the end of"
                                                       : "faulted inside";
  return "the access at byte offset " + std::to_string(offset) + " " + where + " " + what;
}

}  // namespace

std::string describe_fault(const FaultTrap& trap, const LaunchPlan& plan, const Dim3& position,
                           unsigned thread, std::span<const BufferArg> buffers) {
  const std::string who = "kernel '" + plan.kernel_name + "' (threadgroup " +
                          format_dim3(position) + ", thread " + std::to_string(thread) + ")";
  if (trap.signal == SIGFPE)
    return "arithmetic fault in " + who + ": integer division by zero or overflow";

  const std::uintptr_t address = trap.address;
  const auto region = find_guarded_region(address);
  if (region) {
    switch (region->kind) {
      case RegionKind::Buffer:
        for (const BufferArg& b : buffers)
          if (b.storage->host_data() == region->data)
            return "out-of-bounds access in " + who + ": " +
                   relative_position(address, *region, describe_buffer(b));
        return "out-of-bounds access in " + who + ": " +
               relative_position(address, *region,
                                 "a buffer of " + std::to_string(region->size) +
                                     " bytes that was not passed to this launch");
      case RegionKind::ThreadgroupMemory:
        return "out-of-bounds access in " + who + ": " +
               relative_position(address, *region,
                                 "threadgroup memory (" + std::to_string(region->size) + " bytes)");
      case RegionKind::FiberStack:
        return "stack overflow in " + who + ": a thread's stack is " +
               std::to_string(region->size / 1024) + " KiB (set METILE_HOST_STACK_KB)";
    }
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(address));
  return "invalid memory access in " + who + " at address " + hex +
         ", which is not within or next to any buffer";
}

std::string describe_slack_write(const LaunchPlan& plan, const BufferArg& buffer,
                                 std::ptrdiff_t offset) {
  return "out-of-bounds write in kernel '" + plan.kernel_name + "': byte offset " +
         std::to_string(offset) + " " + (offset < 0 ? "before the start of " : "past the end of ") +
         describe_buffer(buffer) +
         " was overwritten (found after the launch, so the thread is unknown)";
}

}  // namespace metile::runtime::host
