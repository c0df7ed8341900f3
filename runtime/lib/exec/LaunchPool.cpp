//===- LaunchPool.cpp - one host thread per GPU for launches --------------===//
//
// Part of sdma, a compiler for GPU collective-communication schedules.
//
//===----------------------------------------------------------------------===//

#include "exec/LaunchPool.h"

namespace sdma::rt {

namespace {
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
} // namespace

LaunchPool::LaunchPool(size_t jobs, std::chrono::microseconds spin)
    : jobs_(jobs ? jobs : 1), spin_(spin), errors_(jobs_), failed_(jobs_) {
  for (size_t i = 1; i < jobs_; ++i)
    threads_.emplace_back([this, i] { worker(i); });
}

LaunchPool::~LaunchPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread &thread : threads_)
    thread.join();
}

void LaunchPool::worker(size_t index) {
  uint64_t seen = 0;
  for (;;) {
    // Spin for the next run, then sleep.
    auto deadline = std::chrono::steady_clock::now() + spin_;
    uint64_t now = generation_.load(std::memory_order_acquire);
    while (now == seen && !stop_.load(std::memory_order_acquire) &&
           std::chrono::steady_clock::now() < deadline) {
      cpuRelax();
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] {
        return stop_.load(std::memory_order_acquire) ||
               generation_.load(std::memory_order_acquire) != seen;
      });
      now = generation_.load(std::memory_order_acquire);
    }
    if (now == seen) // stopping, nothing new
      return;
    seen = now;
    std::string error;
    if (!(*job_)(index, error)) {
      errors_[index] = std::move(error);
      failed_[index] = 1;
    }
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

bool LaunchPool::run(const Job &job, std::string &error) {
  for (size_t i = 0; i < jobs_; ++i) {
    failed_[i] = 0;
    errors_[i].clear();
  }
  job_ = &job;
  pending_.store(jobs_ - 1, std::memory_order_release);
  {
    // Under the lock, so that a worker between its check and its wait
    // cannot miss the new generation.
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  wake_.notify_all();
  std::string own;
  if (!job(0, own)) {
    errors_[0] = std::move(own);
    failed_[0] = 1;
  }
  while (pending_.load(std::memory_order_acquire) != 0)
    cpuRelax();
  job_ = nullptr;
  for (size_t i = 0; i < jobs_; ++i)
    if (failed_[i]) {
      error = errors_[i];
      return false;
    }
  return true;
}

} // namespace sdma::rt
