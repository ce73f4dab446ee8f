// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/thread_pool.hpp"

#include <chrono>
#include <exception>

#include "libpkg/base/signal_cleanup.hpp"

namespace libpkg {

namespace {
// The pool whose worker is running on this thread (null elsewhere): lets a
// nested parallel_for on the same pool help instead of blocking a worker.
thread_local const ThreadPool* current_pool = nullptr;
}  // namespace

unsigned ThreadPool::default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = default_threads();
  workers_.reserve(threads);
  // Workers never take SIGINT/SIGTERM: the cleanup handler runs on a thread
  // outside the pool, which is not meanwhile laying out the tree it removes.
  SignalCleanup::BlockSignals block;
  for (unsigned i = 0; i < threads; ++i)
    workers_.emplace_back([this] { run(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::enqueue(std::function<void()> job) {
  {
    std::lock_guard lock(mutex_);
    jobs_.push(std::move(job));
  }
  cv_.notify_one();
}

void ThreadPool::run() {
  current_pool = this;
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (jobs_.empty()) return;  // stopping and drained
      job = std::move(jobs_.front());
      jobs_.pop();
    }
    job();
  }
}

bool ThreadPool::run_one() {
  std::function<void()> job;
  {
    std::lock_guard lock(mutex_);
    if (jobs_.empty()) return false;
    job = std::move(jobs_.front());
    jobs_.pop();
  }
  job();
  return true;
}

void ThreadPool::parallel_for(std::size_t n,
                              const std::function<void(std::size_t)>& fn) {
  std::vector<std::future<void>> futures;
  futures.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    futures.push_back(submit([&fn, i] { fn(i); }));
  // A worker of this pool waiting on its own jobs would hold a thread the
  // jobs need (with one worker, forever): it runs queued jobs meanwhile.
  // Any queued job helps: ours are queued behind them or already running.
  if (current_pool == this) {
    for (auto& f : futures)
      while (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        if (!run_one()) break;
  }
  std::exception_ptr first;
  for (auto& f : futures) {
    try {
      f.get();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace libpkg
