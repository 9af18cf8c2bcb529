#include "metile/runtime/host/threadgroup_runner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>

#include "metile/runtime/host/fault_report.h"
#include "metile/runtime/kernel_errors.h"
#include "metile/support/errors.h"

namespace metile::runtime::host {

namespace ctx = boost::context::detail;

namespace {
thread_local ThreadgroupRunner* active_runner = nullptr;
constexpr const char* kThreadgroupBarrier = "threadgroup_barrier";
constexpr std::size_t kSlotBytes = METILE_HOST_SIMD_SLOT_BYTES;
constexpr unsigned kWidth = METILE_HOST_SIMD_WIDTH;
// Above the work-group emitter's 2 MiB of per-thread arrays, with room for the frame.
constexpr std::size_t kWorkgroupStackBytes = std::size_t{8} << 20;
}  // namespace

bool ThreadgroupRunner::WaitSite::operator==(const WaitSite& o) const {
  // The names are literals of the module, so equal ones are almost always the same pointer.
  return line == o.line && (op == o.op || std::strcmp(op, o.op) == 0);
}

ThreadgroupRunner* ThreadgroupRunner::active() {
  return active_runner;
}

void ThreadgroupRunner::run(const LaunchPlan& plan, const Dim3& position,
                            unsigned char* threadgroup_memory) {
  plan_ = &plan;
  position_ = position;
  threadgroup_memory_ = threadgroup_memory;
  in_workgroup_ = false;
  const unsigned n = plan.thread_count;
  threads_.assign(n, EmulatedThread{});
  simd_groups_.resize((n + kWidth - 1) / kWidth);
  for (unsigned g = 0; g < simd_groups_.size(); ++g) {
    SimdGroup& group = simd_groups_[g];
    group.lanes = std::min(kWidth, n - g * kWidth);
    group.arrived = 0;
    group.slots.resize(2 * kWidth * kSlotBytes);
  }
  ready_.clear();
  ready_head_ = 0;
  exited_ = 0;
  barrier_arrived_ = 0;
  pending_ = PendingError::None;
  pending_offset_.reset();
  pending_pc_ = nullptr;
  pending_where_ = {};
  pending_buffer_.clear();
  ++epoch_;
  active_runner = this;

  next_new_ = 0;
  while (true) {
    unsigned t;
    if (ready_head_ < ready_.size()) {
      t = ready_[ready_head_++];
    } else if (next_new_ < n) {
      t = next_new_++;
    } else {
      break;
    }
    resume(t);
    if (pending_ != PendingError::None) {
      abandon();
      throw_pending_error();
    }
  }
  active_runner = nullptr;
  if (exited_ != n) {
    const std::string report = divergence_report(0, n);
    abandon();
    throw DivergentBarrierError(report);
  }
}

void ThreadgroupRunner::run_workgroup(const LaunchPlan& plan, const Dim3& position,
                                      unsigned char* threadgroup_memory) {
  plan_ = &plan;
  position_ = position;
  threadgroup_memory_ = threadgroup_memory;
  in_workgroup_ = true;
  active_runner = this;
  workgroup_coords_ = {};
  for (int i = 0; i < 3; ++i) {
    workgroup_coords_.threadgroup_position_in_grid[i] = position[i];
    workgroup_coords_.threadgroups_per_grid[i] = plan.grid[i];
    workgroup_coords_.threads_per_threadgroup[i] = plan.threadgroup_size[i];
  }
  // The function keeps its per-thread arrays on its stack: one of a known size, with a guard
  // page, rather than whatever stack the calling OS thread has.
  if (!workgroup_stack_.data())
    workgroup_stack_ = GuardedRegion(kWorkgroupStackBytes, RegionKind::FiberStack);
  workgroup_error_ = nullptr;
  ctx::jump_fcontext(ctx::make_fcontext(workgroup_stack_.data() + workgroup_stack_.size(),
                                        workgroup_stack_.size(), &workgroup_main),
                     this);
  in_workgroup_ = false;
  active_runner = nullptr;
  if (workgroup_error_) std::rethrow_exception(std::exchange(workgroup_error_, nullptr));
}

void ThreadgroupRunner::workgroup_main(ctx::transfer_t from_runner) {
  auto* self = static_cast<ThreadgroupRunner*>(from_runner.data);
  try {
    self->plan_->run_threadgroup(self->plan_->args, self->threadgroup_memory_,
                                 &self->workgroup_coords_);
  } catch (...) {  // carried back to the worker's stack: exceptions cannot cross contexts
    self->workgroup_error_ = std::current_exception();
  }
  ctx::jump_fcontext(from_runner.fctx, nullptr);  // never resumed
}

void ThreadgroupRunner::abandon() {
  for (auto& t : threads_) {
    if (t.stack_top) stacks_.release(t.stack_top);
    t.stack_top = nullptr;
    t.context = nullptr;
  }
  active_runner = nullptr;
}

void ThreadgroupRunner::resume(unsigned thread) {
  EmulatedThread& t = threads_[thread];
  current_ = thread;
  if (t.state == State::NotStarted) {
    t.stack_top = stacks_.acquire();
    t.context = ctx::make_fcontext(t.stack_top, stacks_.stack_bytes(), &fiber_main);
  }
  t.state = State::Running;
  const ctx::transfer_t back = ctx::jump_fcontext(t.context, this);
  // The fiber may have moved on to later threads (see fiber_main): current_ is its last.
  EmulatedThread& last = threads_[current_];
  last.context = back.fctx;
  if (last.state == State::Exited) {
    stacks_.release(last.stack_top);
    last.stack_top = nullptr;
  }
}

void ThreadgroupRunner::fiber_main(ctx::transfer_t from_scheduler) {
  auto* self = static_cast<ThreadgroupRunner*>(from_scheduler.data);
  self->scheduler_ = from_scheduler.fctx;
  while (true) {
    self->run_current_thread();
    EmulatedThread& done = self->threads_[self->current_];
    done.state = State::Exited;
    ++self->exited_;
    // When the scheduler would start the next new thread anyway, start it here, on this
    // stack: a kernel without barriers then costs no context switch per thread.
    if (self->ready_head_ < self->ready_.size() || self->next_new_ >= self->plan_->thread_count)
      break;
    EmulatedThread& next = self->threads_[self->next_new_];
    next.stack_top = std::exchange(done.stack_top, nullptr);
    next.state = State::Running;
    self->current_ = self->next_new_++;
  }
  ctx::jump_fcontext(self->scheduler_, nullptr);  // never resumed
}

void ThreadgroupRunner::run_current_thread() {
  const unsigned t = current_;
  const Dim3& size = plan_->threadgroup_size;
  MetileHostThreadCoords coords{};
  for (int i = 0; i < 3; ++i) {
    coords.threadgroup_position_in_grid[i] = position_[i];
    coords.threadgroups_per_grid[i] = plan_->grid[i];
    coords.threads_per_threadgroup[i] = size[i];
  }
  coords.thread_position_in_threadgroup[0] = t % size[0];
  coords.thread_position_in_threadgroup[1] = t / size[0] % size[1];
  coords.thread_position_in_threadgroup[2] = t / (size[0] * size[1]);
  coords.simd_lane = t % kWidth;
  coords.simd_group = t / kWidth;
  plan_->run_thread(plan_->args, threadgroup_memory_, &coords);
}

void ThreadgroupRunner::block() {
  threads_[current_].state = State::Waiting;
  const ctx::transfer_t back = ctx::jump_fcontext(scheduler_, nullptr);
  scheduler_ = back.fctx;
}

void ThreadgroupRunner::release(unsigned first, unsigned count) {
  for (unsigned t = first; t < first + count; ++t) {
    if (t == current_) continue;
    threads_[t].state = State::Ready;
    ready_.push_back(t);
  }
}

void ThreadgroupRunner::require_fibers(const char* op, int line) const {
  // The work-group emitter turns every rendezvous it accepts into loop boundaries.
  if (in_workgroup_)
    throw InternalError("kernel '" + plan_->kernel_name + "': its work-group function reached " +
                        op + " (line " + std::to_string(line) +
                        "), a rendezvous that needs fibers; the work-group emitter must leave "
                        "such kernels on fibers");
}

void ThreadgroupRunner::threadgroup_barrier(int line) {
  require_fibers(kThreadgroupBarrier, line);
  EmulatedThread& me = threads_[current_];
  me.site = {kThreadgroupBarrier, line};
  if (++barrier_arrived_ < plan_->thread_count) {
    block();
    return;
  }
  barrier_arrived_ = 0;
  for (const auto& t : threads_)
    if (!(t.site == me.site))
      abort_threadgroup(PendingError::Divergence, divergence_report(0, plan_->thread_count));
  ++epoch_;
  release(0, plan_->thread_count);
}

MetileHostSimdView ThreadgroupRunner::simd_rendezvous(const void* value, unsigned bytes,
                                                      const char* op, int line) {
  require_fibers(op, line);
  const unsigned group_index = current_ / kWidth, lane = current_ % kWidth;
  SimdGroup& group = simd_groups_[group_index];
  const unsigned parity = group.generation & 1;
  unsigned char* slots = group.slots.data() + parity * kWidth * kSlotBytes;
  if (group.arrived == 0) group.shared_ready[parity] = 0;  // every lane is done with it
  if (bytes) std::memcpy(slots + lane * kSlotBytes, value, bytes);
  EmulatedThread& me = threads_[current_];
  me.site = {op, line};
  const MetileHostSimdView view{slots, lane, group.lanes, group.shared[parity].data(),
                                &group.shared_ready[parity]};
  if (++group.arrived < group.lanes) {
    block();
    return view;
  }
  const unsigned first = group_index * kWidth;
  for (unsigned t = first; t < first + group.lanes; ++t)
    if (!(threads_[t].site == me.site))
      abort_threadgroup(PendingError::Divergence, divergence_report(first, group.lanes));
  group.arrived = 0;
  ++group.generation;
  release(first, group.lanes);
  return view;
}

bool ThreadgroupRunner::ordered_before(unsigned other, uint32_t generation) const {
  return other == current_ || (other / kWidth == current_ / kWidth &&
                               generation != simd_groups_[current_ / kWidth].generation);
}

void ThreadgroupRunner::memory_access(const void* address, unsigned bytes, bool is_write,
                                      const void* pc) {
  const auto* at = static_cast<const unsigned char*>(address);
  const std::size_t size = plan_->threadgroup_bytes;
  if (at < threadgroup_memory_ || at >= threadgroup_memory_ + size) return;
  if (history_.size() < size) history_.resize(size);
  const std::size_t first = std::size_t(at - threadgroup_memory_);
  const std::size_t end = std::min(size, first + bytes);
  const uint32_t generation = simd_groups_[current_ / kWidth].generation;
  const auto me = static_cast<uint16_t>(current_);
  for (std::size_t b = first; b < end; ++b) {
    ByteHistory& h = history_[b];
    if (h.write_epoch == epoch_ && !ordered_before(h.writer, h.write_generation))
      report_race(b, is_write, h.writer, "wrote", pc);
    if (is_write) {
      if (h.read_epoch == epoch_) {
        if (!ordered_before(h.reader, h.read_generation))
          report_race(b, true, h.reader, "read", pc);
        if (h.several_readers && !ordered_before(h.other_reader, h.read_generation))
          report_race(b, true, h.other_reader, "read", pc);
      }
      h.write_epoch = epoch_;
      h.write_generation = generation;
      h.writer = me;
    } else if (h.read_epoch != epoch_) {
      h.read_epoch = epoch_;
      h.read_generation = generation;
      h.reader = me;
      h.several_readers = false;
    } else if (h.reader != me && !h.several_readers) {
      h.other_reader = me;
      h.several_readers = true;
    }
  }
}

void ThreadgroupRunner::report_race(std::size_t offset, bool is_write, unsigned other,
                                    const char* other_did, const void* pc) {
  pending_offset_ = static_cast<long long>(offset);
  pending_pc_ = pc;
  abort_threadgroup(PendingError::Fault,
                    "threadgroup memory race in kernel '" + plan_->kernel_name + "' (" + where() +
                        ", thread " + std::to_string(current_) + "): thread " +
                        std::to_string(current_) + (is_write ? " writes" : " reads") +
                        " byte offset " + std::to_string(offset) +
                        " of threadgroup memory, which thread " + std::to_string(other) + " " +
                        other_did + " since the last threadgroup barrier");
}

void ThreadgroupRunner::fail(const char* message) {
  abort_threadgroup(PendingError::Fault, "in kernel '" + plan_->kernel_name + "', " + where() +
                                             ", thread " + std::to_string(current_) + ": " +
                                             message);
}

void ThreadgroupRunner::fail_thread(unsigned thread, const char* message) {
  throw KernelFaultError("in kernel '" + plan_->kernel_name + "', " + where() + ", thread " +
                             std::to_string(thread) + ": " + message,
                         {}, FaultSite{plan_->kernel_name, position_, thread, "", std::nullopt});
}

void ThreadgroupRunner::assert_failed(unsigned thread, const char* message, SourceLocation where) {
  const std::string text = "device_assert failed in kernel '" + plan_->kernel_name + "' (" +
                           this->where() + ", thread " + std::to_string(thread) + "): " + message;
  FaultSite site{plan_->kernel_name, position_, thread, "", std::nullopt};
  if (in_workgroup_) throw KernelFaultError(text, std::move(where), std::move(site));
  pending_where_ = std::move(where);
  abort_threadgroup(PendingError::Fault, text);
}

void ThreadgroupRunner::out_of_bounds(unsigned thread, unsigned param, long long byte_offset,
                                      unsigned bytes, bool is_write, int line) {
  if (thread == ~0u) thread = current_;
  if (param == ~0u) {  // a pointer made from an integer, in no live buffer
    char address[32];
    std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(byte_offset));
    const std::string text = "out-of-bounds access in kernel '" + plan_->kernel_name + "' (" +
                             this->where() + ", thread " + std::to_string(thread) + "): the " +
                             std::to_string(bytes) + "-byte " + (is_write ? "write" : "read") +
                             " at address " + address +
                             ", through a pointer made from an integer, lies in no live buffer";
    SourceLocation at = plan_->abi->source_of_line(line);
    FaultSite site{plan_->kernel_name, position_, thread, "", std::nullopt};
    if (in_workgroup_) throw KernelFaultError(text, std::move(at), std::move(site));
    pending_where_ = std::move(at);
    abort_threadgroup(PendingError::Fault, text);
  }
  const unsigned long long* extents =
      static_cast<const unsigned long long*>(plan_->args[plan_->abi->params.size()]);
  const unsigned long long extent = extents[param];
  const std::string& buffer = plan_->abi->params.at(param).name;
  const char* where = byte_offset < 0 ? "is before the start of"
                      : static_cast<unsigned long long>(byte_offset) >= extent
                          ? "is past the end of"
                          : "runs past the end of";
  const std::string text = "out-of-bounds access in kernel '" + plan_->kernel_name + "' (" +
                           this->where() + ", thread " + std::to_string(thread) +
                           "): the access at byte offset " + std::to_string(byte_offset) + " " +
                           where + " buffer " + std::to_string(param) + " ('" + buffer + "', " +
                           std::to_string(extent) + " bytes) (a " + std::to_string(bytes) +
                           "-byte " + (is_write ? "write" : "read") + ")";
  SourceLocation at = plan_->abi->source_of_line(line);
  FaultSite site{plan_->kernel_name, position_, thread, buffer, byte_offset};
  if (in_workgroup_) throw KernelFaultError(text, std::move(at), std::move(site));
  pending_where_ = std::move(at);
  pending_buffer_ = buffer;
  pending_offset_ = byte_offset;
  abort_threadgroup(PendingError::Fault, text);
}

void ThreadgroupRunner::abort_threadgroup(PendingError kind, std::string message) {
  pending_ = kind;
  pending_thread_ = current_;
  pending_message_ = std::move(message);  // leaves nothing behind in this abandoned frame
  block();
  __builtin_unreachable();  // the scheduler abandons this fiber and never resumes it
}

void ThreadgroupRunner::throw_pending_error() {
  if (pending_ == PendingError::Divergence) throw DivergentBarrierError(pending_message_);
  // The racing access's line is looked up here, on the worker's own stack.
  const SourceLocation where =
      pending_pc_ ? source_line_of(*plan_, reinterpret_cast<std::uintptr_t>(pending_pc_) - 1,
                                   pending_message_)
                  : pending_where_;
  throw KernelFaultError(
      pending_message_, where,
      FaultSite{plan_->kernel_name, position_, pending_thread_, pending_buffer_, pending_offset_});
}

std::string ThreadgroupRunner::where() const {
  return "threadgroup " + format_dim3(position_);
}

namespace {
// "0-15, 32-47"
std::string format_ranges(const std::vector<unsigned>& ids) {
  std::string out;
  for (std::size_t i = 0; i < ids.size();) {
    std::size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += std::to_string(ids[i]);
    if (j > i) out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out;
}
}  // namespace

std::string ThreadgroupRunner::divergence_report(unsigned first, unsigned count) const {
  // Group threads by where they stopped, in order of the first thread of each group.
  std::vector<std::pair<std::string, std::vector<unsigned>>> groups;
  bool any_barrier = false;
  for (unsigned t = first; t < first + count; ++t) {
    const EmulatedThread& th = threads_[t];
    std::string place;
    if (th.state == State::Exited) {
      place = "exited";
    } else {
      any_barrier |= std::strcmp(th.site.op, kThreadgroupBarrier) == 0;
      place = std::string("wait at ") + th.site.op + " (line " + std::to_string(th.site.line) + ")";
    }
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == place; });
    if (it == groups.end())
      groups.push_back({place, {t}});
    else
      it->second.push_back(t);
  }
  std::string scope = where();
  if (count < plan_->thread_count)
    scope += ", SIMD group " + std::to_string(first / kWidth) + " (threads " +
             std::to_string(first) + "-" + std::to_string(first + count - 1) + ")";
  std::string out = std::string(any_barrier ? "divergent barrier" : "divergent SIMD collective") +
                    " in kernel '" + plan_->kernel_name + "', " + scope +
                    ": not every thread reached the same " +
                    (any_barrier ? "barrier" : "collective") + ":";
  for (const auto& [place, ids] : groups)
    out +=
        "\n  thread" + std::string(ids.size() > 1 ? "s " : " ") + format_ranges(ids) + " " + place;
  const Dim3& s = plan_->threadgroup_size;
  if (s[1] > 1 || s[2] > 1)
    out += "\n  (thread t is at position (t % " + std::to_string(s[0]) + ", t / " +
           std::to_string(s[0]) + " % " + std::to_string(s[1]) + ", t / " +
           std::to_string(s[0] * s[1]) + ") of the threadgroup)";
  return out;
}

}  // namespace metile::runtime::host
