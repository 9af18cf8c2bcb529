#include "metile/runtime/host/worker_pool.h"

#include <cstdlib>

namespace metile::runtime::host {

WorkerPool::WorkerPool(unsigned size) {
  for (unsigned w = 1; w < size; ++w) helpers_.emplace_back([this, w] { helper_loop(w); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : helpers_) t.join();
}

WorkerPool& WorkerPool::shared() {
  static WorkerPool* pool = [] {
    unsigned size = std::thread::hardware_concurrency();
    if (const char* env = std::getenv("METILE_HOST_THREADS")) {
      const long v = std::strtol(env, nullptr, 10);
      if (v > 0) size = static_cast<unsigned>(v);
    }
    return new WorkerPool(size == 0 ? 1 : size);  // never destroyed: helpers may be parked
  }();
  return *pool;
}

void WorkerPool::run_on_all(const std::function<void(unsigned)>& job, uint64_t tasks) {
  std::lock_guard call(call_mutex_);
  if (tasks > 1 && !helpers_.empty()) {
    {
      std::lock_guard lock(mutex_);
      job_ = &job;
      open_ = true;
      ++generation_;
    }
    wake_.notify_all();
  }
  job(0);
  std::unique_lock lock(mutex_);
  open_ = false;
  done_.wait(lock, [this] { return running_ == 0; });
  job_ = nullptr;
}

void WorkerPool::helper_loop(unsigned worker) {
  unsigned long seen = 0;
  while (true) {
    const std::function<void(unsigned)>* job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
      if (!open_) continue;  // worker 0 finished the job before this helper woke
      job = job_;
      ++running_;
    }
    (*job)(worker);
    std::lock_guard lock(mutex_);
    if (--running_ == 0) done_.notify_one();
  }
}

}  // namespace metile::runtime::host
