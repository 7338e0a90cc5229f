// A thread pool for timed runs whose workers spin between parallel loops instead of sleeping.
//   SpinPool::par_for - runs task(env, i) for i in [min, min + extent) on the calling thread and
//                       the pool's workers; returns 0, or a task's non-zero status.
// Halide's own pool puts idle workers to sleep on a condition variable; on a virtual machine,
// waking a sleeping CPU takes long and varies from process to process, and a program of many
// short parallel loops then times the wake-ups as much as its code (docs/collect.md, "The
// thread pool"). A measuring child has the machine to itself while it times (the timing lock),
// so its workers may spin: they sleep only after `spin_seconds` without work (between
// measurements, after the timed runs). Independent of Halide: the JIT's do_par_for handler
// calls it (program.cpp).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tcost::halide {

class SpinPool {
 public:
  using Task = int (*)(void* env, int index);

  // `threads` counts the calling thread: threads - 1 workers (none for 1).
  explicit SpinPool(int threads, double spin_seconds = 0.05);
  ~SpinPool();
  SpinPool(const SpinPool&) = delete;
  SpinPool& operator=(const SpinPool&) = delete;

  // Nested calls (from inside a task) and calls while another thread's loop is in flight run
  // serially on the calling thread. Tasks after a failed one may be skipped.
  int par_for(Task task, void* env, int min, int extent);
  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // par_for calls so far (serial ones included).
  uint64_t loops() const { return loops_.load(); }

 private:
  struct Job;
  void work_loop();
  static void work(Job& job);

  std::vector<std::thread> workers_;
  const double spin_seconds_;
  std::atomic<Job*> current_{nullptr};
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> joined_{0};    // workers between taking current_ and leaving the job
  std::atomic<int> sleepers_{0};  // workers waiting on wake_
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> loops_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
};

// The process's pool of `threads` (made on first use; a later call with another count is
// served by the first pool).
SpinPool& measuring_pool(int threads);

}  // namespace tcost::halide
