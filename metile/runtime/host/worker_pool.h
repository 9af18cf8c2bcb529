// OS threads that run threadgroups in parallel. The calling thread is worker 0, so a
// launch on a one-thread pool never switches threads. Size: env METILE_HOST_THREADS, or
// the hardware concurrency.
#pragma once

#include <condition_variable>
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
  // Runs job(worker) on every worker and returns when all returned. `job` must not
  // throw. One call at a time; concurrent callers wait their turn.
  void run_on_all(const std::function<void(unsigned worker)>& job);

 private:
  void helper_loop(unsigned worker);

  std::mutex call_mutex_;  // serializes run_on_all
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned long generation_ = 0;
  unsigned running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> helpers_;
};

}  // namespace metile::runtime::host
