#include "decomposed/eval/thread_pool.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace decomposed::eval {
namespace {
// Set while a thread runs a ParallelFor body: nested calls run inline.
thread_local bool in_parallel_body = false;

int ResolveThreads(int threads) {
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The idle pools of ThreadPoolLease. Never destroyed (a pool's workers may
// outlive static destruction at exit); reachable, so not a leak.
struct PoolCache {
  static constexpr size_t kMaxIdle = 4;
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadPool>> idle;
  // Pools whose workers belong to a parent process (after fork()): never
  // joined, kept reachable.
  std::vector<std::unique_ptr<ThreadPool>> orphans;

  static PoolCache& Get() {
    static PoolCache* cache = [] {
      auto* c = new PoolCache;
      // fork(): the child has only the forking thread, so the workers of
      // every cached pool are gone there. Hold the lock across the fork and
      // let the child set its copies aside without joining (joining a
      // thread that does not exist blocks forever).
      pthread_atfork([] { Get().mu.lock(); }, [] { Get().mu.unlock(); },
                     [] {
                       PoolCache& c = Get();
                       for (std::unique_ptr<ThreadPool>& p : c.idle) {
                         c.orphans.push_back(std::move(p));
                       }
                       c.idle.clear();
                       c.mu.unlock();
                     });
      return c;
    }();
    return *cache;
  }
};

}  // namespace

ThreadPoolLease::ThreadPoolLease(int threads) {
  const int n = ResolveThreads(threads);
  PoolCache& c = PoolCache::Get();
  {
    std::lock_guard<std::mutex> l(c.mu);
    for (size_t i = 0; i < c.idle.size(); ++i) {
      if (c.idle[i]->threads() == n) {
        pool_ = std::move(c.idle[i]);
        c.idle.erase(c.idle.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
    }
  }
  pool_ = std::make_unique<ThreadPool>(n);
}

ThreadPoolLease::~ThreadPoolLease() {
  if (!pool_) return;
  PoolCache& c = PoolCache::Get();
  std::lock_guard<std::mutex> l(c.mu);
  if (pool_->owner_pid() != getpid()) {
    c.orphans.push_back(std::move(pool_));  // leased before a fork
  } else if (c.idle.size() < PoolCache::kMaxIdle && std::uncaught_exceptions() == 0 &&
             pool_->idle()) {
    c.idle.push_back(std::move(pool_));
  }
  // else the pool is joined here, as the lease's own
}

ThreadPool::ThreadPool(int threads) : owner_pid_(static_cast<int>(getpid())) {
  threads = ResolveThreads(threads);
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

bool ThreadPool::idle() {
  std::lock_guard<std::mutex> l(mu_);
  return fn_ == nullptr && busy_workers_ == 0 && !in_parallel_body;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::RunChunks() {
  for (;;) {
    int64_t begin;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (next_ >= n_) return;
      begin = next_;
      next_ = std::min(n_, next_ + chunk_);
    }
    const int64_t end = std::min(n_, begin + chunk_);
    // Reset also when the body throws, so this thread's later calls are
    // not all run inline.
    struct InBody {
      InBody() { in_parallel_body = true; }
      ~InBody() { in_parallel_body = false; }
    } in_body;
    std::exception_ptr thrown;
    try {
      (*fn_)(begin, end);
    } catch (...) {
      thrown = std::current_exception();
    }
    std::lock_guard<std::mutex> l(mu_);
    // The job's first exception goes to ParallelFor's caller; the other
    // chunks still run (they may not know), so that the job ends whole.
    if (thrown && !error_) error_ = thrown;
    if (--chunks_left_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::Work() {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> l(mu_);
      start_cv_.wait(l, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++busy_workers_;
    }
    RunChunks();
    std::lock_guard<std::mutex> l(mu_);
    if (--busy_workers_ == 0) done_cv_.notify_all();
  }
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = (n + grain - 1) / grain;
  if (workers_.empty() || in_parallel_body || max_chunks <= 1) {
    fn(0, n);
    return;
  }
  // A few chunks per thread balances uneven work without much locking.
  const int64_t want = std::min<int64_t>(max_chunks, int64_t{threads()} * 4);
  const int64_t chunk = (n + want - 1) / want;
  {
    std::unique_lock<std::mutex> l(mu_);
    // One job at a time (a second caller thread waits for the first).
    done_cv_.wait(l, [&] { return fn_ == nullptr && busy_workers_ == 0; });
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    next_ = 0;
    chunks_left_ = (n + chunk - 1) / chunk;
    ++generation_;
  }
  start_cv_.notify_all();
  RunChunks();
  std::unique_lock<std::mutex> l(mu_);
  done_cv_.wait(l, [&] { return chunks_left_ == 0 && busy_workers_ == 0; });
  fn_ = nullptr;
  std::exception_ptr thrown = std::exchange(error_, nullptr);
  done_cv_.notify_all();
  l.unlock();
  if (thrown) std::rethrow_exception(thrown);
}

}  // namespace decomposed::eval
