// SPDX-License-Identifier: BSD-3-Clause
// A small fixed-size thread pool.
//
// Packaging work is a batch of independent jobs (compress a member, patch a
// file, hash a library). `submit` returns a future so errors thrown by a job
// come back to the caller as the original libpkg::Error; `parallel_for` runs
// an index range and rethrows the first failure after all jobs finished.
//
// One pool serves a whole job: frontends make it sized by -j and pass it down
// in the options structs (`ThreadPool* pool`); library calls run on it
// through a PoolRef, which makes a private pool when none is given.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

namespace libpkg {

/// A fixed set of worker threads running queued jobs in order.
class ThreadPool {
 public:
  /// Starts `threads` workers (0: one per available core). Throws
  /// std::system_error when a thread cannot be started.
  explicit ThreadPool(unsigned threads = 0);
  /// Runs the jobs still queued, then joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The number of worker threads.
  unsigned size() const { return static_cast<unsigned>(workers_.size()); }

  /// Queues `f`; its result (or the exception it throws) comes back
  /// through the future.
  template <typename F>
  auto submit(F&& f) -> std::future<decltype(f())> {
    using R = decltype(f());
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(f));
    std::future<R> result = task->get_future();
    enqueue([task] { (*task)(); });
    return result;
  }

  /// Runs fn(i) for i in [0, n) on the pool and waits; rethrows the first
  /// exception (by index order) once every job has finished. Called from a
  /// job of this same pool (a shared pool reached twice down one call
  /// chain), the waiting worker runs queued jobs itself instead of blocking,
  /// so nesting cannot deadlock.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

  /// One per available core (at least 1).
  static unsigned default_threads();

 private:
  void enqueue(std::function<void()> job);
  void run();
  // Pops and runs one queued job on the calling thread; false when none.
  bool run_one();

  std::vector<std::thread> workers_;
  std::queue<std::function<void()>> jobs_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
};

/// The pool an operation runs its jobs on: the caller's `shared` pool when
/// given (one pool for the whole job, sized by -j), else a private pool of
/// `threads` workers (0: one per core) that lives as long as this handle.
/// Same calls as ThreadPool, so an operation's code reads the same either
/// way. Throws as ThreadPool's constructor does.
class PoolRef {
 public:
  /// Uses `shared` when non-null, else starts a private pool of `threads`
  /// workers; throws std::system_error when a thread cannot be started.
  PoolRef(ThreadPool* shared, unsigned threads)
      : own_(shared ? nullptr : std::make_unique<ThreadPool>(threads)),
        pool_(shared ? shared : own_.get()) {}

  /// The pool's number of workers.
  unsigned size() const { return pool_->size(); }
  /// ThreadPool::submit on the pool.
  template <typename F>
  auto submit(F&& f) -> std::future<decltype(f())> {
    return pool_->submit(std::forward<F>(f));
  }
  /// ThreadPool::parallel_for on the pool.
  void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
    pool_->parallel_for(n, fn);
  }
  /// The pool itself, to pass further down.
  ThreadPool* get() const { return pool_; }

 private:
  std::unique_ptr<ThreadPool> own_;
  ThreadPool* pool_;
};

}  // namespace libpkg
