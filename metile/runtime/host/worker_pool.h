// OS threads that run threadgroups in parallel. The calling thread is worker 0, so a
// launch on a one-thread pool never switches threads. Size: env METILE_HOST_THREADS, or
// the hardware concurrency.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace metile::runtime::host {

class WorkerPool {
 public:
  explicit WorkerPool(unsigned size);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  static WorkerPool& shared();
  unsigned size() const { return static_cast<unsigned>(helpers_.size()) + 1; }
  // Runs job(0) on the calling thread and job(worker) on each helper that starts before
  // job(0) returns (none for fewer than two tasks), and returns when all of them returned: a
  // job shares its tasks out, so a helper the OS schedules late has nothing left to do and
  // the launch does not wait for it to wake. `job` must not throw. One call at a time;
  // concurrent callers wait their turn.
  void run_on_all(const std::function<void(unsigned worker)>& job, uint64_t tasks);

 private:
  void helper_loop(unsigned worker);

  std::mutex call_mutex_;  // serializes run_on_all
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned long generation_ = 0;
  unsigned running_ = 0;  // helpers in the job
  bool open_ = false;     // whether a woken helper may still join the job
  bool stopping_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace metile::runtime::host
