// Runs the threads of one threadgroup as fibers on the calling OS thread. Scheduling is
// deterministic: threads start in index order and each runs until it finishes or blocks
// at a rendezvous (barrier or SIMD collective); released threads resume in index order
// before new ones start. When no thread can run but some have not finished, the
// threadgroup is divergent and the report says where each thread stopped.
#pragma once

#include <array>
#include <boost/context/detail/fcontext.hpp>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "metile/runtime/host/fiber_stack_pool.h"
#include "metile/runtime/host/guarded_memory.h"
#include "metile/runtime/host/launch_plan.h"

namespace metile::runtime::host {

class ThreadgroupRunner {
 public:
  explicit ThreadgroupRunner(FiberStackPool& stacks) : stacks_(stacks) {}

  // Runs every thread of threadgroup `position`. Throws DivergentBarrierError or
  // KernelFaultError when the kernel breaks the execution model.
  void run(const LaunchPlan& plan, const Dim3& position, unsigned char* threadgroup_memory);
  // Runs threadgroup `position` as one call of the module's work-group function
  // (plan.run_threadgroup): no fibers, the threads are loops inside the function.
  void run_workgroup(const LaunchPlan& plan, const Dim3& position,
                     unsigned char* threadgroup_memory);
  // Forgets a threadgroup interrupted by a fault: its fibers are never resumed.
  void abandon();

  // The emulated thread being executed (valid during run, and after a fault); unknown in a
  // work-group function, whose threads are iterations of loops.
  std::optional<unsigned> current_thread() const {
    return in_workgroup_ ? std::nullopt : std::optional<unsigned>(current_);
  }
  const Dim3& position() const { return position_; }

  // The runner executing on this OS thread, for the module's runtime callbacks.
  static ThreadgroupRunner* active();
  void threadgroup_barrier(int line);
  MetileHostSimdView simd_rendezvous(const void* value, unsigned bytes, const char* op, int line);
  unsigned simd_lane() const { return current_ % METILE_HOST_SIMD_WIDTH; }
  [[noreturn]] void fail(const char* message);
  // A work-group function's fail: thread `thread` misused the execution model.
  [[noreturn]] void fail_thread(unsigned thread, const char* message);
  // A failed device_assert of thread `thread` at `where`: a KernelFaultError with that line.
  [[noreturn]] void assert_failed(unsigned thread, const char* message, SourceLocation where);
  // A device access that a bounds check of the emitted code refused: `bytes` at `byte_offset`
  // from the start of parameter `param`'s buffer, by `thread` (~0u: the current fiber), at
  // emitted line `line`. A KernelFaultError naming the buffer, the offset and the line.
  [[noreturn]] void out_of_bounds(unsigned thread, unsigned param, long long byte_offset,
                                  unsigned bytes, bool is_write, int line);
  // A load or store of a race-checking build: an access to threadgroup memory that another
  // thread wrote (or, for a store, read) since the last threadgroup barrier is a race,
  // unless both threads are in one SIMD group and a SIMD-group rendezvous separates them.
  void memory_access(const void* address, unsigned bytes, bool is_write, const void* pc);

 private:
  enum class State : uint8_t { NotStarted, Ready, Running, Waiting, Exited };
  enum class PendingError { None, Divergence, Fault };
  struct WaitSite {
    const char* op = nullptr;
    int line = 0;
    bool operator==(const WaitSite& o) const;
  };
  struct EmulatedThread {
    boost::context::detail::fcontext_t context = nullptr;
    unsigned char* stack_top = nullptr;
    State state = State::NotStarted;
    WaitSite site;
  };
  // Who touched one byte of threadgroup memory in the current barrier interval (epoch).
  struct ByteHistory {
    uint32_t write_epoch = 0, read_epoch = 0;
    uint32_t write_generation = 0, read_generation = 0;  // of the thread's SIMD group
    uint16_t writer = 0, reader = 0, other_reader = 0;
    bool several_readers = false;
  };
  struct SimdGroup {
    unsigned lanes = 0;
    unsigned arrived = 0;
    unsigned generation = 0;
    std::vector<unsigned char> slots;  // two generations of 32 lane slots
    std::array<std::array<unsigned char, METILE_HOST_SIMD_SLOT_BYTES>, 2> shared{};
    std::array<unsigned, 2> shared_ready{};  // per generation parity
  };

  static void fiber_main(boost::context::detail::transfer_t from_scheduler);
  static void workgroup_main(boost::context::detail::transfer_t from_runner);
  // InternalError when a work-group function calls a rendezvous (it has no fibers to block).
  void require_fibers(const char* op, int line) const;
  void resume(unsigned thread);
  void run_current_thread();
  void block();  // parks the current thread until a rendezvous releases it
  void release(unsigned first, unsigned count);
  // Whether thread `other`'s access (its SIMD group at `generation`) happens before the
  // current thread's in the current epoch.
  bool ordered_before(unsigned other, uint32_t generation) const;
  [[noreturn]] void report_race(std::size_t offset, bool is_write, unsigned other,
                                const char* other_did, const void* pc);
  std::string divergence_report(unsigned first, unsigned count) const;
  std::string where() const;
  [[noreturn]] void throw_pending_error();
  // Ends the threadgroup from inside a fiber: records the error and parks for good.
  [[noreturn]] void abort_threadgroup(PendingError kind, std::string message);

  FiberStackPool& stacks_;
  const LaunchPlan* plan_ = nullptr;
  Dim3 position_{0, 0, 0};
  unsigned char* threadgroup_memory_ = nullptr;
  std::vector<EmulatedThread> threads_;
  std::vector<SimdGroup> simd_groups_;
  std::vector<unsigned> ready_;  // FIFO of released threads
  std::size_t ready_head_ = 0;
  unsigned current_ = 0;
  unsigned next_new_ = 0;  // threads below it have started
  unsigned exited_ = 0;
  unsigned barrier_arrived_ = 0;
  boost::context::detail::fcontext_t scheduler_ = nullptr;
  PendingError pending_ = PendingError::None;
  std::string pending_message_;
  unsigned pending_thread_ = 0;
  std::optional<long long> pending_offset_;  // into threadgroup memory, for a race
  const void* pending_pc_ = nullptr;         // the racing access, for its source line
  SourceLocation pending_where_;             // a failed device_assert's line
  std::string pending_buffer_;               // the buffer of a refused access
  uint32_t epoch_ = 0;                       // barrier intervals, never reset
  std::vector<ByteHistory> history_;         // per byte of threadgroup memory (race checks)
  bool in_workgroup_ = false;                // run_workgroup is executing
  GuardedRegion workgroup_stack_;            // where the work-group function runs
  MetileHostThreadCoords workgroup_coords_{};
  std::exception_ptr workgroup_error_;
};

}  // namespace metile::runtime::host
