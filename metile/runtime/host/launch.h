// Runs a host kernel module over a grid: threadgroups are distributed over the worker
// pool; each runs as fibers on one worker with its own guard-paged threadgroup memory.
// Errors (divergent barriers, faults) are reported for the lowest-numbered failing
// threadgroup, so the report does not depend on thread timing.
#pragma once

#include <span>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/host/host_module.h"
#include "metile/runtime/kernel_args.h"

namespace metile::runtime::host {

void launch_on_host(const HostModule& module, const codegen::KernelABI& abi, const Grid& grid,
                    std::span<const KernelArg> args);

}  // namespace metile::runtime::host
