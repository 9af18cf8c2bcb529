#include "metile/runtime/host/launch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>

#include "metile/runtime/host/fault_report.h"
#include "metile/runtime/host/fault_trap.h"
#include "metile/runtime/host/host_device.h"
#include "metile/runtime/host/threadgroup_runner.h"
#include "metile/runtime/host/worker_pool.h"
#include "metile/runtime/kernel_errors.h"
#include "metile/support/errors.h"

namespace metile::runtime::host {

namespace {

// What a worker keeps between launches.
struct WorkerState {
  FiberStackPool stacks;
  ThreadgroupRunner runner{stacks};
  GuardedRegion threadgroup_memory;
  uint64_t current_threadgroup = 0;
  bool finding_thread = false;  // re-running a faulted work-group threadgroup on fibers
  FaultTrap first_fault;        // that threadgroup's fault in the work-group function
};

WorkerState& worker_state() {
  thread_local WorkerState state;
  return state;
}

class LaunchState {
 public:
  LaunchState(const LaunchPlan& plan, std::span<const BufferArg> buffers)
      : plan(plan), buffers(buffers), total(uint64_t(plan.grid[0]) * plan.grid[1] * plan.grid[2]) {}

  const LaunchPlan& plan;
  std::span<const BufferArg> buffers;
  const uint64_t total;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> lowest_failure{std::numeric_limits<uint64_t>::max()};

  void record(uint64_t threadgroup, std::exception_ptr error) {
    std::lock_guard lock(mutex_);
    if (threadgroup < lowest_failure.load()) {
      lowest_failure.store(threadgroup);
      error_ = std::move(error);
    }
  }
  void rethrow_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

Dim3 threadgroup_position(uint64_t index, const Dim3& grid) {
  return {unsigned(index % grid[0]), unsigned(index / grid[0] % grid[1]),
          unsigned(index / (uint64_t(grid[0]) * grid[1]))};
}

// Threadgroups after the lowest failing one are skipped; earlier ones still run, so the
// reported failure is the same on every run.
void run_threadgroups(LaunchState& launch, WorkerState& worker) {
  const LaunchPlan& plan = launch.plan;
  while (true) {
    const uint64_t index = launch.next.fetch_add(1, std::memory_order_relaxed);
    if (index >= launch.total || index > launch.lowest_failure.load(std::memory_order_relaxed))
      return;
    worker.current_threadgroup = index;
    // Uninitialized threadgroup memory reads as NaN / -1, the same on every run.
    std::memset(worker.threadgroup_memory.data(), 0xFF, plan.threadgroup_bytes);
    try {
      if (plan.run_threadgroup)
        worker.runner.run_workgroup(plan, threadgroup_position(index, plan.grid),
                                    worker.threadgroup_memory.data());
      else
        worker.runner.run(plan, threadgroup_position(index, plan.grid),
                          worker.threadgroup_memory.data());
    } catch (...) {
      launch.record(index, std::current_exception());
    }
  }
}

void run_worker(LaunchState& launch) {
  WorkerState& worker = worker_state();
  if (!worker.threadgroup_memory.data() ||
      worker.threadgroup_memory.size() != launch.plan.threadgroup_bytes)
    worker.threadgroup_memory =
        GuardedRegion(launch.plan.threadgroup_bytes, RegionKind::ThreadgroupMemory);
  FaultTrap& trap = FaultTrap::for_this_thread();
  if (METILE_FAULT_TRAP_SET(trap) != 0) {
    // A kernel thread faulted; its fibers are abandoned and the worker carries on.
    worker.runner.abandon();
    const uint64_t index = worker.current_threadgroup;
    const Dim3 position = threadgroup_position(index, launch.plan.grid);
    if (!worker.runner.current_thread() && !worker.finding_thread) {
      // A work-group function's threads are loop iterations, so the fault names none: run
      // the threadgroup again on fibers, where the fault (if it recurs) names its thread.
      worker.finding_thread = true;
      worker.first_fault.signal = trap.signal;
      worker.first_fault.code = trap.code;
      worker.first_fault.address = trap.address;
      worker.first_fault.pc = trap.pc;
      trap.armed = 1;
      std::memset(worker.threadgroup_memory.data(), 0xFF, launch.plan.threadgroup_bytes);
      try {
        worker.runner.run(launch.plan, position, worker.threadgroup_memory.data());
      } catch (...) {  // not the fault: the first report stands
      }
      worker.runner.abandon();
      launch.record(index,
                    std::make_exception_ptr(fault_error(worker.first_fault, launch.plan, position,
                                                        std::nullopt, launch.buffers)));
    } else {
      launch.record(
          index, std::make_exception_ptr(fault_error(
                     trap, launch.plan, position, worker.runner.current_thread(), launch.buffers)));
    }
    worker.finding_thread = false;
  }
  trap.armed = 1;
  run_threadgroups(launch, worker);
  trap.armed = 0;
}

void check_slack(const LaunchPlan& plan, std::span<const BufferArg> buffers) {
  for (const BufferArg& b : buffers) {
    GuardedRegion& region = b.storage->region();
    if (auto offset = region.damaged_slack()) {
      region.restore_slack();
      throw slack_write_error(plan, b, *offset);
    }
  }
}

// METILE_HOST_EXECUTION: the work-group function where the module has one (the default),
// or the strategy it names.
MetileHostRunThreadgroupFn chosen_execution(const HostModule& module,
                                            const codegen::KernelABI& abi) {
  const char* env = std::getenv("METILE_HOST_EXECUTION");
  const std::string choice = env ? env : "";
  if (choice.empty() || choice == "auto") return module.run_threadgroup();
  if (choice == "fibers") return nullptr;
  if (choice != "workgroup")
    throw UserError("METILE_HOST_EXECUTION is '" + choice +
                    "'; it must be auto, fibers or workgroup");
  if (!module.run_threadgroup())
    throw UserError("METILE_HOST_EXECUTION=workgroup: kernel '" + abi.kernel_name +
                    "' cannot run as a work-group function; it runs on " + module.execution());
  return module.run_threadgroup();
}

}  // namespace

void launch_on_host(const HostModule& module, const codegen::KernelABI& abi, const Grid& grid,
                    std::span<const KernelArg> args) {
  std::vector<BoundArg> bound = bind_kernel_args(abi, args);
  // One pointer per parameter, then the buffers' byte sizes (host_runtime_abi.h).
  std::vector<void*> pointers(bound.size() + 1);
  std::vector<unsigned long long> extents(bound.size(), 0);
  pointers[bound.size()] = extents.data();
  std::vector<BufferArg> buffers;
  for (std::size_t i = 0; i < bound.size(); ++i) {
    if (!bound[i].buffer) {
      pointers[i] = bound[i].scalar;
      continue;
    }
    auto* storage = dynamic_cast<HostBufferStorage*>(&bound[i].buffer->storage());
    if (!storage)
      throw UserError("kernel '" + abi.kernel_name + "' parameter " + std::to_string(i) + " ('" +
                      abi.params[i].name + "') is a buffer on device '" +
                      bound[i].buffer->device().name() + "', not on the host device");
    pointers[i] = storage->host_data();
    extents[i] = storage->size_bytes();
    buffers.push_back({i, abi.params[i].name, storage});
  }

  const auto& tpt = abi.threads_per_threadgroup;
  if (tpt[0] < 1 || tpt[1] < 1 || tpt[2] < 1 || abi.threadgroup_bytes < 0)
    throw InternalError("KernelABI of '" + abi.kernel_name + "' has an invalid threadgroup shape");
  LaunchPlan plan;
  plan.kernel_name = abi.kernel_name;
  plan.abi = &abi;
  plan.run_thread = module.run_thread();
  plan.run_threadgroup = chosen_execution(module, abi);
  plan.args = pointers.data();
  plan.grid = {grid.x, grid.y, grid.z};
  plan.threadgroup_size = {unsigned(tpt[0]), unsigned(tpt[1]), unsigned(tpt[2])};
  plan.thread_count = unsigned(abi.threads_total());
  plan.threadgroup_bytes = std::size_t(abi.threadgroup_bytes);

  LaunchState launch(plan, buffers);
  if (launch.total == 0) return;
  WorkerPool::shared().run_on_all([&launch](unsigned) { run_worker(launch); }, launch.total);
  launch.rethrow_error();
  check_slack(plan, buffers);
}

}  // namespace metile::runtime::host
