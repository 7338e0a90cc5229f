// A machine probe for the measurement studies (docs/collect.md, "Sessions, not boots"): how
// fast this machine's two CPUs compute and read memory, alone and together, so that a session's
// runtimes can be set beside the state of the machine it ran on. Plain C++, no tcost:
//   g++ -O2 -march=x86-64-v3 -pthread scripts/machine-probe.cpp -o out/machine-probe &&
//   out/machine-probe
// Three rounds, each the median of five timings of every kernel:
//   fma       - 32 independent multiply-add chains (enough to fill the FMA pipes), on CPU 0 alone,
//               then on CPUs 0 and 1 together: two separate cores give ~2x one's throughput,
//               two hyperthreads of one core ~1x;
//   DRAM read - a 128 MiB array per thread summed twice (beyond the caches);
//   L2 read   - a 512 KiB array per thread summed 400 times (private to a core).
#include <pthread.h>
#include <sched.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
volatile double sink;
double fma_kernel(long n) {
  double a[32];
  for (int k = 0; k < 32; ++k) a[k] = 1 + 0.01 * k;
  for (long i = 0; i < n; ++i)
    for (int k = 0; k < 32; ++k) a[k] = a[k] * 0.9999999 + 1e-7;
  double s = 0;
  for (double x : a) s += x;
  return s;
}
double read_kernel(const std::vector<double>& v, int reps) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i + 3 < v.size(); i += 4) {
      s0 += v[i];
      s1 += v[i + 1];
      s2 += v[i + 2];
      s3 += v[i + 3];
    }
  return s0 + s1 + s2 + s3;
}
template <class F>
double run(const std::vector<int>& cpus, F f) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<double> t(cpus.size());
  std::vector<std::thread> th;
  for (size_t i = 0; i < cpus.size(); ++i)
    th.emplace_back([&, i] {
      pin(cpus[i]);
      ready++;
      while (!go) {
      }
      double t0 = now();
      sink = f(i);
      t[i] = now() - t0;
    });
  while (ready < (int)cpus.size()) {
  }
  go = true;
  for (auto& x : th) x.join();
  return *std::max_element(t.begin(), t.end());
}
int main() {
  const long n = 15'000'000;
  std::vector<std::vector<double>> big(2, std::vector<double>(16 << 20, 1.0));  // 128 MiB each
  std::vector<std::vector<double>> l2(2, std::vector<double>(64 << 10, 1.0));   // 512 KiB each
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<double> c1, c2, m1, m2, l1v, l2v;
    for (int k = 0; k < 5; ++k) {
      c1.push_back(run({0}, [&](size_t) { return fma_kernel(n); }));
      c2.push_back(run({0, 1}, [&](size_t) { return fma_kernel(n); }));
      m1.push_back(run({0}, [&](size_t i) { return read_kernel(big[i], 2); }));
      m2.push_back(run({0, 1}, [&](size_t i) { return read_kernel(big[i], 2); }));
      l1v.push_back(run({0}, [&](size_t i) { return read_kernel(l2[i], 400); }));
      l2v.push_back(run({0, 1}, [&](size_t i) { return read_kernel(l2[i], 400); }));
    }
    double gf = n * 32.0 * 2 / med(c1) / 1e9;
    std::printf(
        "fma: one thread %.2f GFLOP/s, two threads together %.2fx one's throughput | "
        "DRAM read: one %.1f GB/s, two %.2fx | L2 read: one %.1f GB/s, two %.2fx\n",
        gf, 2 * med(c1) / med(c2), (2.0 * 128 * 1048576 / 1e9) / med(m1), 2 * med(m1) / med(m2),
        (400.0 * 524288 / 1e9) / med(l1v), 2 * med(l1v) / med(l2v));
  }
}
