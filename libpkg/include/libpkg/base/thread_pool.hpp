// SPDX-License-Identifier: BSD-3-Clause
// A small fixed-size thread pool.
//
// Packaging work is a batch of independent jobs (compress a member, patch a
// file, hash a library). `submit` returns a future so errors thrown by a job
// come back to the caller as the original libpkg::Error; `parallel_for` runs
// an index range and rethrows the first failure after all jobs finished.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <future>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace libpkg {

class ThreadPool {
 public:
  // threads == 0 means one per available core.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

  template <typename F>
  auto submit(F&& f) -> std::future<decltype(f())> {
    using R = decltype(f());
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(f));
    std::future<R> result = task->get_future();
    enqueue([task] { (*task)(); });
    return result;
  }

  // Runs fn(i) for i in [0, n) on the pool and waits; rethrows the first
  // exception (by index order) once every job has finished.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

  static unsigned default_threads();

 private:
  void enqueue(std::function<void()> job);
  void run();

  std::vector<std::thread> workers_;
  std::queue<std::function<void()>> jobs_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

}  // namespace libpkg
