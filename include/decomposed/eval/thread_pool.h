// A fixed pool of worker threads with one blocking primitive, ParallelFor,
// which the evaluator's elementwise ops, reductions and copies split their
// work with. The calling thread takes part; a pool of one thread runs
// everything inline. ParallelFor may be called from inside a ParallelFor
// body: the inner call then runs inline (no deadlock, no oversubscription).
//
// Example:
//   decomposed::eval::ThreadPool pool(4);
//   std::vector<float> v(1 << 20);
//   pool.ParallelFor(v.size(), 4096, [&](int64_t begin, int64_t end) {
//     for (int64_t i = begin; i < end; ++i) v[i] = std::sqrt(float(i));
//   });
#ifndef DECOMPOSED_EVAL_THREAD_POOL_H_
#define DECOMPOSED_EVAL_THREAD_POOL_H_

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace decomposed::eval {

class ThreadPool {
 public:
  // `threads` <= 0: one per core (std::thread::hardware_concurrency).
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // The process whose threads the workers are (a fork's child has none).
  int owner_pid() const { return owner_pid_; }
  // No job running or left half done (a body that threw leaves one).
  bool idle();

  // Calls fn(begin, end) on disjoint ranges covering [0, n), each of at
  // least `grain` items (but the last), on up to threads() threads, and
  // returns when all are done. A body that throws (on any thread) does not
  // end the process: the other ranges still run, then the first exception
  // is rethrown here, and the pool is ready for the next job.
  void ParallelFor(int64_t n, int64_t grain,
                   const std::function<void(int64_t, int64_t)>& fn);

 private:
  void Work();
  void RunChunks();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  // The current job.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 0, next_ = 0, chunks_left_ = 0;
  int busy_workers_ = 0;
  std::exception_ptr error_;  // the current job's first exception
  int owner_pid_ = 0;
};

// A pool of `threads` (<= 0: one per core) lent for one evaluation from a
// process-wide cache of idle pools, and given back when the lease ends:
// starting and joining the workers on every evaluation cost more than a
// small module's whole work (a lone 128^3 dot), and a new worker waits for
// the scheduler on a busy machine. Concurrent evaluations hold distinct
// pools; at most four idle pools are kept, their workers asleep. A pool is
// cached only when idle and given back without an exception in flight. A
// child process made by fork() starts with an empty cache, and a pool
// leased before the fork is never cached or joined there (the parent's
// workers do not exist in the child): it is set aside, still reachable.
class ThreadPoolLease {
 public:
  explicit ThreadPoolLease(int threads);
  ~ThreadPoolLease();
  ThreadPoolLease(const ThreadPoolLease&) = delete;
  ThreadPoolLease& operator=(const ThreadPoolLease&) = delete;

  ThreadPool& pool() { return *pool_; }

 private:
  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace decomposed::eval

#endif  // DECOMPOSED_EVAL_THREAD_POOL_H_
