// SPDX-License-Identifier: BSD-3-Clause
// ThreadPool: results come back, every index runs once, and failures are
// reported only after the whole batch has finished.
#include "libpkg/base/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "libpkg/base/error.hpp"

namespace libpkg {
namespace {

TEST(ThreadPool, Size) {
  EXPECT_EQ(ThreadPool(3).size(), 3u);
  EXPECT_EQ(ThreadPool(0).size(), ThreadPool::default_threads());
  EXPECT_GE(ThreadPool::default_threads(), 1u);
}

TEST(ThreadPool, SubmitReturnsResults) {
  ThreadPool pool(4);
  std::vector<std::future<int>> futures;
  for (int i = 0; i < 100; ++i)
    futures.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 100; ++i) EXPECT_EQ(futures[i].get(), i * i);
  auto s = pool.submit([] { return std::string("text"); });
  EXPECT_EQ(s.get(), "text");
  auto v = pool.submit([] {});
  v.get();
}

TEST(ThreadPool, SubmitPropagatesTheOriginalError) {
  ThreadPool pool(2);
  auto f = pool.submit(
      []() -> int { throw Error(Errc::format, "lib.so", "broken", 0x10); });
  try {
    f.get();
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_EQ(e.file(), "lib.so");
    EXPECT_EQ(e.offset(), 0x10u);
  }
}

TEST(ThreadPool, RunsOnSeveralThreads) {
  ThreadPool pool(2);
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  // Each job waits for the other, so both threads must be busy at once.
  pool.parallel_for(2, [&](size_t) {
    {
      std::lock_guard lock(m);
      ids.insert(std::this_thread::get_id());
    }
    ++arrived;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (arrived.load() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
  });
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
}

TEST(ThreadPool, ParallelForCoversEachIndexOnce) {
  ThreadPool pool(4);
  constexpr size_t n = 10000;
  std::vector<std::atomic<int>> hits(n);
  pool.parallel_for(n, [&](size_t i) { hits[i].fetch_add(1); });
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << i;
}

TEST(ThreadPool, ParallelForZeroIsANoOp) {
  ThreadPool pool(2);
  bool called = false;
  pool.parallel_for(0, [&](size_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ThreadPool, ParallelForRethrowsFirstByIndexAfterAllFinish) {
  ThreadPool pool(4);
  constexpr size_t n = 64;
  std::atomic<int> finished{0};
  try {
    pool.parallel_for(n, [&](size_t i) {
      // Index 5 fails last in time but first in index order.
      if (i == 5) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ++finished;
        throw Error(Errc::format, "five", "index 5");
      }
      if (i == 40) {
        ++finished;
        throw std::runtime_error("index 40");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++finished;
    });
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "five");
    EXPECT_EQ(finished.load(), static_cast<int>(n));
  }
}

TEST(ThreadPool, UsableAfterAFailedBatch) {
  ThreadPool pool(2);
  EXPECT_THROW(
      pool.parallel_for(3, [](size_t) { throw std::logic_error("x"); }),
      std::logic_error);
  std::atomic<int> sum{0};
  pool.parallel_for(10, [&](size_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum.load(), 45);
}

TEST(ThreadPool, NestedParallelForOnTheSamePoolDoesNotDeadlock) {
  // A shared pool reached twice down one call chain: the outer jobs occupy
  // every worker while they wait for the inner ones.
  ThreadPool pool(1);
  std::atomic<int> inner{0};
  auto outer = std::async(std::launch::async, [&] {
    pool.parallel_for(
        3, [&](size_t) { pool.parallel_for(4, [&](size_t) { ++inner; }); });
  });
  if (outer.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    // The deadlocked workers can be neither joined nor abandoned safely.
    ADD_FAILURE() << "nested parallel_for deadlocked";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  outer.get();
  EXPECT_EQ(inner.load(), 12);
}

TEST(PoolRef, SharesTheGivenPoolOrOwnsOne) {
  ThreadPool shared(3);
  PoolRef borrowed(&shared, 7);
  EXPECT_EQ(borrowed.get(), &shared);
  EXPECT_EQ(borrowed.size(), 3u);
  PoolRef own(nullptr, 2);
  EXPECT_NE(own.get(), nullptr);
  EXPECT_EQ(own.size(), 2u);
  std::atomic<int> sum{0};
  own.parallel_for(10, [&](size_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(own.submit([] { return 5; }).get(), 5);
  EXPECT_EQ(sum.load(), 45);
}

TEST(ThreadPool, DestructorDrainsQueuedJobs) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(1);
    for (int i = 0; i < 50; ++i) pool.submit([&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 50);
}

}  // namespace
}  // namespace libpkg
