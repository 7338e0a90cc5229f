#include "halide/measure.h"

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "halide/program.h"

namespace tcost::halide {
namespace {

using Clock = std::chrono::steady_clock;

// What the child sends back: fixed-size numbers, then an error text.
struct Wire {
  int ok = 0;
  int runs = 0;
  double compile_ms = 0, search_ms = 0, best_ns = 0, third_ns = 0, median_ns = 0;
  double timed_wall_s = 0, timed_cpu_s = 0, steal_s = 0;
  long involuntary_switches = 0;
  double process_wall_s = 0;  // a forked timing process's own wall time (fork to report)
  char error[256] = {};
};

// The machine's steal time so far in seconds (the hypervisor ran another guest on a CPU this one
// wanted), from /proc/stat; 0 where it cannot be read.
double steal_seconds() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (f == nullptr) return 0;
  unsigned long long v[8] = {};
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                            &v[3], &v[4], &v[5], &v[6], &v[7]);
  std::fclose(f);
  const long hz = sysconf(_SC_CLK_TCK);
  return n == 8 && hz > 0 ? static_cast<double>(v[7]) / static_cast<double>(hz) : 0;
}

// This process's CPU time (all threads) and involuntary context switches so far.
void usage(double& cpu_s, long& involuntary) {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  cpu_s = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
          1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  involuntary = u.ru_nivcsw;
}

// Pins the threads of this process one per CPU of its affinity mask, the calling thread on the
// first. Best effort: a thread that ends meanwhile or a mask of one CPU leaves things as they are.
void pin_threads() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  }
  if (cpus.size() < 2) return;
  const auto self = static_cast<pid_t>(syscall(SYS_gettid));
  std::vector<pid_t> tids{self};
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(dir)) {
      const pid_t tid = static_cast<pid_t>(std::atoi(e->d_name));
      if (tid > 0 && tid != self) tids.push_back(tid);
    }
    closedir(dir);
  }
  for (size_t i = 0; i < tids.size(); ++i) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[i % cpus.size()], &one);
    sched_setaffinity(tids[i], sizeof(one), &one);
  }
}

// The lock file measuring processes share (-1 without one); a process that opens it holds its
// own lock, released when the process ends (its descriptor closed by _exit).
int open_lock(const MeasureOptions& o) {
  return o.lock_path.empty() ? -1 : open(o.lock_path.c_str(), O_RDWR | O_CREAT, 0644);
}

void hold(int lock, int how) {
  if (lock < 0) return;
  while (flock(lock, how) != 0 && errno == EINTR) {
  }
}

void steady_heap(const MeasureOptions& o) {
  if (!o.steady_heap) return;
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  mallopt(M_TOP_PAD, 256 << 20);
}

// Warm-up, timed runs and check of a prepared workload in this process, into `w` (which keeps
// its compile figures). Takes `lock` exclusively first; with exclusive_until_exit it is kept
// until the process ends.
void time_workload(const Workload& workload, const MeasureOptions& o, int lock, Wire& w) {
  const std::function<void()>& work = workload.run;
  hold(lock, LOCK_EX);
  for (int i = 0; i < o.warmup_runs; ++i) work();
  if (o.pin_threads && o.warmup_runs > 0) pin_threads();
  std::vector<double> times;
  double total_s = 0;
  double cpu0 = 0;
  long switches0 = 0;
  usage(cpu0, switches0);
  const double steal0 = steal_seconds();
  const auto timed0 = Clock::now();
  const bool every_run = o.check_every_run && workload.check && workload.poison;
  double poison_s = 0;  // time spent poisoning and checking, not counted as run time
  // With min_run_seconds, a short program's runs go on past max_runs until their total reaches
  // it (bounded by kRunCap runs and max_run_seconds).
  constexpr int kRunCap = 1000000;
  while (static_cast<int>(times.size()) < o.max_runs ||
         (total_s < o.min_run_seconds && static_cast<int>(times.size()) < kRunCap)) {
    const int run = static_cast<int>(times.size());
    if (every_run) {
      const auto p = Clock::now();
      workload.poison(run);
      poison_s += std::chrono::duration<double>(Clock::now() - p).count();
    }
    const auto s = Clock::now();
    work();
    const double ns = std::chrono::duration<double, std::nano>(Clock::now() - s).count();
    if (every_run) {
      const auto c = Clock::now();
      const std::string wrong = workload.check();
      poison_s += std::chrono::duration<double>(Clock::now() - c).count();
      if (!wrong.empty()) {
        const double best = times.empty() ? 0 : *std::min_element(times.begin(), times.end());
        std::snprintf(w.error, sizeof(w.error),
                      "wrong output in timed run %d (%.0f ns; the fastest right run before it "
                      "%.0f ns): %s",
                      run + 1, ns, best, wrong.c_str());
        return;
      }
    }
    times.push_back(ns);
    total_s += ns * 1e-9;
    if (total_s > o.max_run_seconds && static_cast<int>(times.size()) >= o.min_runs) break;
    if (static_cast<int>(times.size()) >= o.min_runs && total_s >= o.min_run_seconds) {
      std::vector<double> sorted = times;
      std::sort(sorted.begin(), sorted.end());
      // Fewer than three runs (min_runs < 3: a single check run) stop at min_runs.
      if (sorted.size() < 3 || sorted[2] <= sorted[0] * (1 + o.tolerance)) break;
    }
  }
  w.timed_wall_s = std::chrono::duration<double>(Clock::now() - timed0).count() - poison_s;
  w.steal_s = steal_seconds() - steal0;
  usage(w.timed_cpu_s, w.involuntary_switches);
  w.timed_cpu_s -= cpu0 + poison_s;  // poisoning and checking run on this thread alone
  w.involuntary_switches -= switches0;
  std::sort(times.begin(), times.end());
  // Checking the outputs and tearing the process down (freeing its buffers) disturb another
  // measurement's timed runs: with exclusive_until_exit the lock is kept until this process
  // ends (the kernel frees its memory before it closes its files, so the teardown happens
  // under the lock too).
  if (!o.exclusive_until_exit) hold(lock, LOCK_UN);
  if (workload.check && !every_run) {
    const std::string wrong = workload.check();
    if (!wrong.empty()) {
      std::snprintf(w.error, sizeof(w.error), "wrong output: %s", wrong.c_str());
      return;
    }
  }
  w.ok = 1;
  w.runs = static_cast<int>(times.size());
  w.best_ns = times.front();
  w.third_ns = times[std::min<size_t>(2, times.size() - 1)];
  w.median_ns = times.size() % 2 == 1
                    ? times[times.size() / 2]
                    : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
}

// Runs `f` (which fills a Wire), turning an exception into the Wire's error.
template <typename F>
void guarded(Wire& w, F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    std::snprintf(w.error, sizeof(w.error), "failed: %s", e.what());
  } catch (...) {
    std::snprintf(w.error, sizeof(w.error), "failed: unknown exception");
  }
}

void write_all(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Compiles (prepare) under the shared lock; the workload and the compile figures in `w`.
Workload compile_workload(const std::function<Workload()>& prepare, int lock, Wire& w) {
  hold(lock, LOCK_SH);
  const auto t0 = Clock::now();
  Workload workload = prepare();
  w.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  w.search_ms = workload.search_ms;
  hold(lock, LOCK_UN);
  return workload;
}

bool read_until(int fd, Clock::time_point deadline, std::string& out);

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// The error of a measuring process that sent no complete report: killed on its deadline,
// crashed, or ended early.
std::string no_report(bool timed_out, double timeout_s, int status) {
  if (timed_out) return timeout_error(timeout_s);
  if (WIFSIGNALED(status)) return fmt::format("crashed (signal {})", WTERMSIG(status));
  return fmt::format("failed: the measuring process exited with status {} before reporting",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

// What a forked child wrote to its pipe and how it ended.
struct Forked {
  std::string error;       // "pipe: ..." or "fork: ...": nothing ran
  std::string bytes;       // what it wrote before it closed the pipe or the deadline passed
  bool timed_out = false;  // killed at the deadline
  int status = 0;          // its wait status
};

// Runs `child(fd)` in a forked process, which writes its report to `fd` and then ends (_exit:
// no destructors or atexit handlers of the parent's state); reads the report until the child
// closes the pipe or `timeout_s` passes, kills it past that, and reaps it.
Forked run_forked(const std::function<void(int fd)>& child, double timeout_s) {
  Forked f;
  int fds[2];
  if (pipe(fds) != 0) {
    f.error = fmt::format("pipe: {}", std::strerror(errno));
    return f;
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    f.error = fmt::format("fork: {}", std::strerror(errno));
    return f;
  }
  if (pid == 0) {
    close(fds[0]);
    child(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  f.timed_out = !read_until(fds[0], after(timeout_s), f.bytes);
  close(fds[0]);
  if (f.timed_out) kill(pid, SIGKILL);
  while (waitpid(pid, &f.status, 0) < 0 && errno == EINTR) {
  }
  return f;
}

// One timing process forked from the compiling one (MeasureOptions::processes), which holds
// `lock` exclusively already: the fork, the copy of the pages the timing process shares with its
// parent (Workload::unshare), its runs and its teardown all happen under the lock, which the
// timing process shares (the same open file). The parent kills it past `budget_s`.
Wire time_in_fork(const Workload& workload, const MeasureOptions& o, const Wire& compiled, int lock,
                  double budget_s) {
  Wire w;
  w.compile_ms = compiled.compile_ms;
  w.search_ms = compiled.search_ms;
  const auto t0 = Clock::now();
  const Forked f = run_forked(
      [&, parent = getpid()](int fd) {
        // Killed with its parent (the collector's deadline kills the compiling process), never
        // left running on its own.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(1);
        guarded(w, [&] {
          if (workload.unshare) workload.unshare();
          time_workload(workload, o, lock, w);
        });
        write_all(fd, &w, sizeof(w));
      },
      budget_s);
  if (!f.error.empty()) {
    std::snprintf(w.error, sizeof(w.error), "failed: %s", f.error.c_str());
    return w;
  }
  if (!f.timed_out && f.bytes.size() == sizeof(w)) {
    std::memcpy(reinterpret_cast<char*>(&w), f.bytes.data(), sizeof(w));
  } else {
    w.ok = 0;
    std::snprintf(w.error, sizeof(w.error), "%s",
                  no_report(f.timed_out, o.timeout_s, f.status).c_str());
  }
  w.process_wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return w;
}

// The measuring child: compiles, then times the workload itself (processes == 1) or in
// `processes` processes forked from it one after another, sending a Wire per timed process to
// `out` and stopping after the first failure.
void run_child(const std::function<Workload()>& prepare, const MeasureOptions& o, int out) {
  Wire w;
  const int lock = open_lock(o);
  steady_heap(o);
  Workload workload;
  bool compiled = false;
  guarded(w, [&] {
    workload = compile_workload(prepare, lock, w);
    compiled = true;
    if (o.processes <= 1) time_workload(workload, o, lock, w);
  });
  if (o.processes <= 1 || !compiled) {
    write_all(out, &w, sizeof(w));
    return;
  }
  // Each process gets the run time a single measurement has left after its compile.
  const double budget_s = std::max(0.1, o.timeout_s - w.compile_ms / 1000);
  for (int k = 0; k < o.processes; ++k) {
    // Forking and tearing down a process as large as a compiler's disturb another measurement's
    // timed runs: this process takes the lock before each fork, and (kept until it ends) over
    // its own teardown too; without exclusive_until_exit a timing process releases it after
    // its timed runs.
    hold(lock, LOCK_EX);
    const Wire f = time_in_fork(workload, o, w, lock, budget_s);
    write_all(out, &f, sizeof(f));
    if (!f.ok) return;
  }
}

MeasureResult from_wire(const Wire& w) {
  MeasureResult r;
  if (!w.ok) {
    r.error = std::string(w.error, strnlen(w.error, sizeof(w.error)));
    return r;
  }
  r.ok = true;
  r.compile_ms = w.compile_ms;
  r.search_ms = w.search_ms;
  r.best_ns = w.best_ns;
  r.third_ns = w.third_ns;
  r.median_ns = w.median_ns;
  r.runs = w.runs;
  r.timed_wall_s = w.timed_wall_s;
  r.timed_cpu_s = w.timed_cpu_s;
  r.steal_s = w.steal_s;
  r.involuntary_switches = w.involuntary_switches;
  r.process_wall_s = w.process_wall_s;
  return r;
}

// Reads what a child writes to `fd` until it closes the pipe or the deadline passes; returns
// false on the deadline.
bool read_until(int fd, Clock::time_point deadline, std::string& out) {
  char buf[1 << 16];
  for (;;) {
    const double left_ms =
        std::chrono::duration<double, std::milli>(deadline - Clock::now()).count();
    if (left_ms <= 0) return false;
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(std::min(left_ms, 1000.0)) + 1);
    if (ready <= 0) continue;  // timeout of this poll, or EINTR
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return true;  // the child closed the pipe: it ended (or crashed)
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

MeasureResult measure_isolated(const std::function<std::function<void()>()>& prepare,
                               const MeasureOptions& o) {
  return measure_isolated(std::function<Workload()>([&prepare] {
                            Workload w;
                            w.run = prepare();
                            return w;
                          }),
                          o);
}

MeasureResult measure_isolated(const std::function<Workload()>& prepare, const MeasureOptions& o) {
  MeasureOptions one = o;
  one.processes = 1;
  return measure_processes(prepare, one).front();
}

std::vector<MeasureResult> measure_processes(const std::function<Workload()>& prepare,
                                             const MeasureOptions& o) {
  const int wanted = std::max(1, o.processes);
  if (o.compile_each && wanted > 1) {
    // The study's control: as many lone measurements, one after another.
    MeasureOptions one = o;
    one.processes = 1;
    std::vector<MeasureResult> results;
    for (int i = 0; i < wanted; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      results.push_back(measure_processes(prepare, one).front());
      results.back().process_wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!results.back().ok) break;
    }
    return results;
  }
  // The child enforces each timing process's share itself; this is the backstop.
  const double limit_s = wanted == 1 ? o.timeout_s : o.timeout_s * wanted + 1;
  const Forked f = run_forked([&](int fd) { run_child(prepare, o, fd); }, limit_s);
  if (!f.error.empty()) {
    MeasureResult r;
    r.error = "failed: " + f.error;
    return {r};
  }
  const std::string& bytes = f.bytes;
  std::vector<MeasureResult> results;
  for (size_t at = 0; at + sizeof(Wire) <= bytes.size() && results.size() < size_t(wanted);
       at += sizeof(Wire)) {
    Wire w;
    std::memcpy(reinterpret_cast<char*>(&w), bytes.data() + at, sizeof(w));
    results.push_back(from_wire(w));
    if (!results.back().ok) return results;
  }
  if (results.size() < size_t(wanted)) {
    MeasureResult r;
    r.error = no_report(f.timed_out, limit_s, f.status);
    results.push_back(r);
  }
  return results;
}

std::string timeout_error(double timeout_s) {
  return fmt::format("timeout after {:.1f} s", timeout_s);
}

std::string failure_kind(const std::string& error) {
  if (error.rfind("timeout", 0) == 0) return "timeout";
  if (error.rfind("crashed", 0) == 0) {
    const size_t close = error.find(')');
    return error.rfind("crashed (signal ", 0) == 0 && close != std::string::npos
               ? error.substr(0, close + 1)
               : "crashed";
  }
  if (error.find("wrong output") != std::string::npos) return "wrong output";
  if (error.find(kReadsOutsideInputs) != std::string::npos) return kReadsOutsideInputs;
  if (error.find("Halide rejected") != std::string::npos ||
      error.find("Error:") != std::string::npos)
    return "rejected by Halide";
  return "other";
}

bool compute_isolated(const std::function<std::string()>& produce, double timeout_s,
                      std::string& bytes, std::string& error) {
  bytes.clear();
  // The child sends a status byte, the length, then the bytes (or the error text).
  const Forked f = run_forked(
      [&produce](int fd) {
        std::string out;
        char status = 1;
        try {
          out = produce();
        } catch (const std::exception& e) {
          out = e.what();
          status = 0;
        } catch (...) {
          out = "unknown exception";
          status = 0;
        }
        const uint64_t len = out.size();
        std::string msg(1, status);
        msg.append(reinterpret_cast<const char*>(&len), sizeof len);
        msg += out;
        write_all(fd, msg.data(), msg.size());
      },
      timeout_s);
  if (!f.error.empty()) {
    error = f.error;
    return false;
  }
  const std::string& got = f.bytes;
  uint64_t len = 0;
  if (f.timed_out) {
    error = timeout_error(timeout_s);
  } else if (WIFSIGNALED(f.status)) {
    error = fmt::format("crashed (signal {})", WTERMSIG(f.status));
  } else if (got.size() < 1 + sizeof len ||
             (std::memcpy(&len, got.data() + 1, sizeof len), got.size() != 1 + sizeof len + len)) {
    error = "the child exited before reporting";
  } else if (got[0] != 1) {
    error = got.substr(1 + sizeof len);
  } else {
    bytes = got.substr(1 + sizeof len);
    return true;
  }
  return false;
}

}  // namespace tcost::halide
