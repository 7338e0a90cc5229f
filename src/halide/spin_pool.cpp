#include "halide/spin_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tcost::halide {
namespace {

void relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

thread_local bool inside_task = false;

}  // namespace

struct SpinPool::Job {
  Task task = nullptr;
  void* env = nullptr;
  int min = 0, extent = 0;
  std::atomic<int> next{0};    // the next index to take
  std::atomic<int> done{0};    // indices finished (run or skipped)
  std::atomic<int> status{0};  // a failed task's status
};

SpinPool::SpinPool(int threads, double spin_seconds) : spin_seconds_(spin_seconds) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work_loop(); });
}

SpinPool::~SpinPool() {
  {
    std::lock_guard<std::mutex> g(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void SpinPool::work(Job& job) {
  inside_task = true;
  for (int i = job.next.fetch_add(1); i < job.extent; i = job.next.fetch_add(1)) {
    if (job.status.load(std::memory_order_relaxed) == 0) {
      const int s = job.task(job.env, job.min + i);
      if (s != 0) job.status.store(s);
    }
    job.done.fetch_add(1, std::memory_order_release);
  }
  inside_task = false;
}

void SpinPool::work_loop() {
  using Clock = std::chrono::steady_clock;
  uint64_t seen = generation_.load();
  for (;;) {
    const auto idle_since = Clock::now();
    for (unsigned spins = 1; generation_.load() == seen && !stop_; ++spins) {
      relax();
      if (spins % 4096 != 0) continue;
      if (std::chrono::duration<double>(Clock::now() - idle_since).count() < spin_seconds_)
        continue;
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleepers_;
      wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
      --sleepers_;
    }
    if (stop_) return;
    seen = generation_.load();
    // Joined before looking at current_: par_for returns only when no worker is joined after
    // it cleared current_, so the job a worker sees is alive while it works on it.
    ++joined_;
    if (Job* job = current_.load()) work(*job);
    --joined_;
  }
}

int SpinPool::par_for(Task task, void* env, int min, int extent) {
  const auto serial = [&] {
    for (int i = 0; i < extent; ++i) {
      if (const int s = task(env, min + i); s != 0) return s;
    }
    return 0;
  };
  ++loops_;
  if (extent <= 0) return 0;
  if (workers_.empty() || inside_task || extent == 1) return serial();
  Job job;
  job.task = task;
  job.env = env;
  job.min = min;
  job.extent = extent;
  Job* none = nullptr;
  if (!current_.compare_exchange_strong(none, &job)) return serial();
  ++generation_;
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> g(mutex_);
    wake_.notify_all();
  }
  work(job);
  while (job.done.load(std::memory_order_acquire) < extent) relax();
  current_.store(nullptr);
  while (joined_.load() != 0) relax();
  return job.status.load();
}

SpinPool& measuring_pool(int threads) {
  static SpinPool pool(threads);
  return pool;
}

}  // namespace tcost::halide
