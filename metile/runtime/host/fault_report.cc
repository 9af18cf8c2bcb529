#include "metile/runtime/host/fault_report.h"

#include <cstdio>

#include "metile/runtime/host/emitted_line.h"
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
                              const std::string& what, FaultSite& site) {
  const auto begin = reinterpret_cast<std::uintptr_t>(region.data);
  const long long offset = static_cast<long long>(address - begin);
  site.byte_offset = offset;
  const char* where = address < begin                  ? "is before the start of"
                      : address >= begin + region.size ? "is past the end of"
                                                       : "faulted inside";
  return "the access at byte offset " + std::to_string(offset) + " " + where + " " + what;
}

// What went wrong, in words: the kind of fault ("out-of-bounds access") and the details.
// Fills in the buffer and offset of `site`.
struct Description {
  std::string kind, detail;
};

Description describe(const FaultTrap& trap, std::span<const BufferArg> buffers, FaultSite& site) {
  if (trap.signal == SIGFPE || trap.signal == SIGILL)
    return {"arithmetic fault",
            "an integer division or remainder by zero, INT_MIN / -1, a shift by at least the "
            "bit width of its operand, a float converted to an integer type that cannot hold "
            "it (NaN, infinite or out of range), or a loop whose step is zero or negative"};
  const std::uintptr_t address = trap.address;
  const auto region = find_guarded_region(address);
  if (region) {
    switch (region->kind) {
      case RegionKind::Buffer:
        for (const BufferArg& b : buffers)
          if (b.storage->host_data() == region->data) {
            site.buffer = b.name;
            return {"out-of-bounds access",
                    relative_position(address, *region, describe_buffer(b), site)};
          }
        return {"out-of-bounds access",
                relative_position(address, *region,
                                  "a buffer of " + std::to_string(region->size) +
                                      " bytes that was not passed to this launch",
                                  site)};
      case RegionKind::ThreadgroupMemory:
        return {"out-of-bounds access",
                relative_position(address, *region,
                                  "threadgroup memory (" + std::to_string(region->size) + " bytes)",
                                  site)};
      case RegionKind::FiberStack:
        return {"stack overflow", "a thread's stack is " + std::to_string(region->size / 1024) +
                                      " KiB (set METILE_HOST_STACK_KB)"};
    }
  }
  char hex[32];
  std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(address));
  return {"invalid memory access",
          std::string("address ") + hex + " is not within or next to any buffer"};
}

}  // namespace

SourceLocation source_line_of(const LaunchPlan& plan, std::uintptr_t pc, std::string& message) {
  const std::vector<int> lines = emitted_lines_of(pc);
  for (int line : lines)
    if (SourceLocation where = plan.abi ? plan.abi->source_of_line(line) : SourceLocation{};
        where.known())
      return where;
  if (!lines.empty()) message += " (emitted line " + std::to_string(lines.front()) + ")";
  return {};
}

KernelFaultError fault_error(const FaultTrap& trap, const LaunchPlan& plan, const Dim3& position,
                             std::optional<unsigned> thread, std::span<const BufferArg> buffers) {
  FaultSite site{plan.kernel_name, position, thread, "", std::nullopt};
  const Description what = describe(trap, buffers, site);
  std::string message = what.kind + " in kernel '" + plan.kernel_name + "' (threadgroup " +
                        format_dim3(position) +
                        (thread ? ", thread " + std::to_string(*thread) : std::string()) + ")";
  SourceLocation where = source_line_of(plan, trap.pc, message);
  message += ": " + what.detail;
  return KernelFaultError(message, std::move(where), std::move(site));
}

KernelFaultError slack_write_error(const LaunchPlan& plan, const BufferArg& buffer,
                                   std::ptrdiff_t offset) {
  return KernelFaultError(
      "out-of-bounds write in kernel '" + plan.kernel_name + "': byte offset " +
          std::to_string(offset) + " " +
          (offset < 0 ? "before the start of " : "past the end of ") + describe_buffer(buffer) +
          " was overwritten (found after the launch, so the thread is unknown)",
      {}, FaultSite{plan.kernel_name, {0, 0, 0}, std::nullopt, buffer.name, offset});
}

}  // namespace metile::runtime::host
