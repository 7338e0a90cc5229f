// The measurement protocol: a hang is cut by the timeout, a crash or an error is recorded, and
// schedules that differ hugely are measured in the right order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <thread>

#include "core/ast.h"
#include "core/tpugraphs_io.h"
#include "halide/arena.h"
#include "halide/collect.h"
#include "halide/datasets.h"
#include "halide/featurize.h"
#include "halide/manifest.h"
#include "halide/measure.h"
#include "halide/measure_batch.h"
#include "halide/result_log.h"
#include "halide/schedule.h"
#include "halide/spin_pool.h"
#include "halide/zoo.h"

#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <set>

#include "core/error.h"

namespace tcost::halide {
namespace {

volatile double sink = 0;

std::function<void()> spin(int iterations) {
  return [iterations] {
    double acc = 0;
    for (int i = 0; i < iterations; ++i) acc += i * 1e-9;
    sink = acc;
  };
}

// The spinning pool runs every index exactly once, on more than one thread, runs nested loops
// serially, and returns a failed task's status.
TEST(SpinPool, RunsEveryIndexOnceAndReportsFailures) {
  SpinPool pool(3, 0.001);
  ASSERT_EQ(pool.threads(), 3);
  struct Env {
    std::vector<std::atomic<int>> hits = std::vector<std::atomic<int>>(1000);
    std::mutex mu;
    std::set<std::thread::id> threads;
    SpinPool* pool = nullptr;
    std::atomic<int> nested{0};
  } env;
  env.pool = &pool;
  for (int round = 0; round < 50; ++round) {
    const int status = pool.par_for(
        [](void* e, int i) {
          auto& v = *static_cast<Env*>(e);
          ++v.hits[static_cast<size_t>(i - 7)];
          {
            std::lock_guard<std::mutex> g(v.mu);
            v.threads.insert(std::this_thread::get_id());
          }
          // Busy for a while, so that the workers take their share.
          volatile double x = 0;
          for (int k = 0; k < 2000; ++k) x = x + k;
          return 0;
        },
        &env, 7, 1000);
    ASSERT_EQ(status, 0);
  }
  for (const auto& h : env.hits) EXPECT_EQ(h.load(), 50);
  EXPECT_GE(env.threads.size(), 2u);
  // Nested: a task's own loop runs on its thread, to the end.
  EXPECT_EQ(pool.par_for(
                [](void* e, int) {
                  auto& v = *static_cast<Env*>(e);
                  return v.pool->par_for(
                      [](void* e2, int) {
                        ++static_cast<Env*>(e2)->nested;
                        return 0;
                      },
                      e, 0, 10);
                },
                &env, 0, 20),
            0);
  EXPECT_EQ(env.nested.load(), 200);
  // A failing task's status comes back; the pool goes on working afterwards (and after its
  // workers slept: spin_seconds is 1 ms here).
  EXPECT_EQ(pool.par_for([](void*, int i) { return i == 13 ? 42 : 0; }, nullptr, 0, 100), 42);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::atomic<int> count{0};
  EXPECT_EQ(pool.par_for(
                [](void* e, int) {
                  ++*static_cast<std::atomic<int>*>(e);
                  return 0;
                },
                &count, 0, 64),
            0);
  EXPECT_EQ(count.load(), 64);
  EXPECT_EQ(pool.par_for([](void*, int) { return 1; }, nullptr, 0, 0), 0);
  EXPECT_GE(pool.loops(), 54u);
}

// The arena gives the same addresses to the same requests, whatever came before in the process:
// placed blocks one page after another at staggered offsets, allocations first fit from the
// lowest address, freed blocks merged and handed out again; it refuses what does not fit and
// pointers that are not its own, and an address that is taken.
TEST(Arena, TheSameRequestsGetTheSameAddresses) {
  constexpr uintptr_t kAt = 0x6b0000000000;
  constexpr size_t kBytes = size_t{16} << 20;  // 8 MiB placed, 8 MiB allocated
  const auto sequence = [&](Arena& a) {
    std::vector<uintptr_t> got;
    const auto off = [&](void* p) { got.push_back(reinterpret_cast<uintptr_t>(p) - kAt); };
    off(a.place(100));
    off(a.place(5000));
    off(a.place(1));
    void* x = a.allocate(1000);
    void* y = a.allocate(300);
    void* z = a.allocate(4096);
    off(x);
    off(y);
    off(z);
    EXPECT_TRUE(a.release(y));
    off(a.allocate(200));  // first fit: y's range
    EXPECT_TRUE(a.release(x));
    EXPECT_TRUE(a.release(z));
    // x's range is too small; what y's left, z's and what follows are merged into one that fits.
    off(a.allocate(1024 + 4096));
    return got;
  };
  std::vector<uintptr_t> first;
  {
    Arena a(kAt, kBytes);
    EXPECT_THROW(Arena(kAt, kBytes), std::runtime_error);  // taken
    first = sequence(a);
    EXPECT_EQ(a.allocations(), 5);
    EXPECT_FALSE(a.release(reinterpret_cast<void*>(kAt + 64)));  // placed, not allocated
    int local = 0;
    EXPECT_FALSE(a.release(&local));
    EXPECT_FALSE(a.contains(&local));
    EXPECT_EQ(a.allocate(kBytes), nullptr);
    EXPECT_THROW(a.place(kBytes / 2), std::runtime_error);
  }
  const std::vector<uintptr_t> want = {0,
                                       4096 + 512,
                                       3 * 4096 + 1024,
                                       kBytes / 2,
                                       kBytes / 2 + 1024,
                                       kBytes / 2 + 1024 + 384,
                                       kBytes / 2 + 1024,
                                       kBytes / 2 + 1280};
  EXPECT_EQ(first, want);
  // Another arena at the same address, after other memory was taken and given back.
  std::vector<std::unique_ptr<char[]>> churn;
  for (int i = 0; i < 100; ++i) churn.emplace_back(new char[static_cast<size_t>(i) * 1000 + 1]);
  churn.clear();
  Arena again(kAt, kBytes);
  EXPECT_EQ(sequence(again), first);
  // Its memory is usable: written and read back.
  auto* p = static_cast<char*>(again.allocate(1 << 20));
  ASSERT_NE(p, nullptr);
  std::memset(p, 7, 1 << 20);
  EXPECT_EQ(p[(1 << 20) - 1], 7);
}

// The THP mode is the bracketed word of the sysfs file; a kernel without THP has no file.
// Where the mode is neither `always` nor `madvise`, the arena's advice reports failure (the
// kernel would accept the madvise and give small pages), so that --huge-pages is refused.
TEST(Arena, HugePagesModeIsTheSelectedWord) {
  EXPECT_EQ(huge_pages_mode("always [madvise] never"), "madvise");
  EXPECT_EQ(huge_pages_mode("[always] madvise never"), "always");
  EXPECT_EQ(huge_pages_mode("always madvise [never]"), "never");
  EXPECT_EQ(huge_pages_mode(""), "");
  EXPECT_EQ(huge_pages_mode("always madvise never"), "");
  const std::string mode = machine_huge_pages_mode();
  const bool usable = mode == "always" || mode == "madvise";
  EXPECT_EQ(huge_pages_unavailable().empty(), usable) << "mode '" << mode << "'";
  if (!usable) {
    Arena a(0x6c8000000000, size_t{4} << 20);
    EXPECT_FALSE(a.advise_huge_pages()) << "advice taken under THP '" << mode << "'";
  }
}

// --huge-pages: the arena asks for transparent huge pages, and where the machine's THP allows
// them (`always` or `madvise`), memory written in it afterwards is backed by 2 MiB pages (the
// mapping's AnonHugePages in /proc/self/smaps), and the arena hands out the same addresses.
TEST(Arena, HugePagesBackItsMemoryWhereTheKernelAllows) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(thp, modes);
  if (modes.empty() || modes.find("[never]") != std::string::npos)
    GTEST_SKIP() << "transparent huge pages are off on this machine: '" << modes << "'";
  constexpr uintptr_t kAt = 0x6c0000000000;    // 2 MiB aligned
  constexpr size_t kBytes = size_t{32} << 20;  // 16 MiB placed, 16 MiB allocated
  Arena a(kAt, kBytes);
  ASSERT_TRUE(a.advise_huge_pages());
  auto* p = static_cast<char*>(a.allocate(size_t{8} << 20));
  ASSERT_EQ(reinterpret_cast<uintptr_t>(p), kAt + kBytes / 2);
  std::memset(p, 3, size_t{8} << 20);
  EXPECT_EQ(p[(size_t{8} << 20) - 1], 3);
  // The arena's mapping in smaps: its header line starts with its address range.
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_arena = false;
  long huge_kb = -1;
  const std::string head = fmt::format("{:x}-", kAt);
  while (std::getline(smaps, line)) {
    if (line.rfind(head, 0) == 0) in_arena = true;
    if (in_arena && line.rfind("AnonHugePages:", 0) == 0) {
      huge_kb = std::stol(line.substr(std::string("AnonHugePages:").size()));
      break;
    }
  }
  ASSERT_GE(huge_kb, 0) << "no AnonHugePages line for the arena's mapping";
  EXPECT_GE(huge_kb, 2048) << "8 MiB written, none of it on a huge page";
}

TEST(Measure, TimesAWorkloadAndOrdersUnequalOnes) {
  MeasureOptions o;
  const MeasureResult fast = measure_isolated([] { return spin(200000); }, o);
  const MeasureResult slow = measure_isolated([] { return spin(4000000); }, o);
  ASSERT_TRUE(fast.ok) << fast.error;
  ASSERT_TRUE(slow.ok) << slow.error;
  EXPECT_GE(fast.runs, o.min_runs);
  EXPECT_LE(fast.best_ns, fast.third_ns);
  EXPECT_LT(fast.best_ns * 5, slow.best_ns);
}

// A minimum timed total keeps a short workload's runs going past max_runs until they add up to
// it; without one, its runs stop at max_runs or on agreement. A single check run (min_runs 1)
// stops at one run.
TEST(Measure, AMinimumTimedTotalGivesShortWorkloadsMoreRuns) {
  MeasureOptions o;
  o.max_runs = 5;
  o.tolerance = 0;  // never agree: without a minimum total the runs stop at max_runs
  const MeasureResult plain = measure_isolated([] { return spin(20000); }, o);
  ASSERT_TRUE(plain.ok) << plain.error;
  EXPECT_EQ(plain.runs, 5);
  o.tolerance = 1.0;  // agree at once: only the minimum total keeps it going
  o.min_run_seconds = 0.05;
  const MeasureResult total = measure_isolated([] { return spin(20000); }, o);
  ASSERT_TRUE(total.ok) << total.error;
  EXPECT_GT(total.runs, 5);
  EXPECT_GE(total.timed_wall_s, 0.05);
  o.min_run_seconds = 0;
  o.min_runs = o.max_runs = 1;
  const MeasureResult once = measure_isolated([] { return spin(20000); }, o);
  ASSERT_TRUE(once.ok) << once.error;
  EXPECT_EQ(once.runs, 1);
  EXPECT_EQ(once.best_ns, once.third_ns);
}

// Whether malloc serves a 64 MiB block by mapping it (the block is used, so that the compiler
// keeps the allocation).
bool big_block_is_mapped() {
  auto* volatile big = static_cast<char*>(std::malloc(64 << 20));
  big[0] = 1;
  const bool mapped = mallinfo2().hblks > 0;
  std::free(big);
  return mapped;
}

// A measurement states what its timed runs shared the machine with; the protocol knobs of the
// study act in the measuring child: --pin-threads leaves each thread on one CPU, --steady-heap
// serves large blocks from the heap instead of mapping them.
TEST(Measure, RecordsTheTimedRunsAndAppliesTheChildKnobs) {
  MeasureOptions o;
  const MeasureResult r = measure_isolated([] { return spin(400000); }, o);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_GT(r.timed_wall_s, 0.0);
  EXPECT_GE(r.timed_wall_s * 1e9, r.best_ns * r.runs * 0.99);
  EXPECT_GT(r.timed_cpu_s, 0.0);
  EXPECT_GE(r.steal_s, 0.0);
  EXPECT_GE(r.involuntary_switches, 0);

  o.pin_threads = true;
  o.steady_heap = true;
  const bool several_cpus = std::thread::hardware_concurrency() > 1;
  const MeasureResult knobs =
      measure_isolated(std::function<Workload()>([several_cpus] {
                         Workload w;
                         w.run = spin(100000);
                         w.check = [several_cpus]() -> std::string {
                           cpu_set_t mine;
                           CPU_ZERO(&mine);
                           if (sched_getaffinity(0, sizeof(mine), &mine) != 0) return "no affinity";
                           if (several_cpus && CPU_COUNT(&mine) != 1)
                             return "not pinned: " + std::to_string(CPU_COUNT(&mine)) + " CPUs";
                           const bool mapped = big_block_is_mapped();
                           return mapped ? "a 64 MiB block was mapped" : "";
                         };
                         return w;
                       }),
                       o);
  EXPECT_TRUE(knobs.ok) << knobs.error;
  // Without the knobs the same checks fail: they can tell.
  o.pin_threads = o.steady_heap = false;
  const MeasureResult plain =
      measure_isolated(std::function<Workload()>([] {
                         Workload w;
                         w.run = spin(100000);
                         w.check = []() -> std::string {
                           const bool mapped = big_block_is_mapped();
                           return mapped ? "" : "a 64 MiB block came from the heap";
                         };
                         return w;
                       }),
                       o);
  EXPECT_TRUE(plain.ok) << plain.error;
}

// check_every_run poisons the outputs before each timed run and checks them after it: a run
// that skips its work (here the third) is caught, with its index; checked once after all runs,
// as without the option, the last run's right answer hides it. A workload without poison is
// checked once, as before.
TEST(Measure, CheckingEveryRunCatchesARunThatSkipsItsWork) {
  const auto workload = [](bool with_poison) {
    return std::function<Workload()>([with_poison] {
      auto out = std::make_shared<std::vector<int>>(1000, 0);
      auto runs = std::make_shared<int>(0);
      Workload w;
      w.run = [out, runs] {
        if (++*runs == 1 + 3) return;  // the warm-up run, then the third timed run skips
        for (size_t i = 0; i < out->size(); ++i) (*out)[i] = static_cast<int>(i);
      };
      w.check = [out]() -> std::string {
        for (size_t i = 0; i < out->size(); ++i) {
          if ((*out)[i] != static_cast<int>(i)) return "element " + std::to_string(i);
        }
        return "";
      };
      if (with_poison) w.poison = [out](int seed) { std::fill(out->begin(), out->end(), -seed); };
      return w;
    });
  };
  MeasureOptions o;
  o.min_runs = 5;
  o.tolerance = 0;
  o.check_every_run = true;
  const MeasureResult caught = measure_isolated(workload(true), o);
  EXPECT_FALSE(caught.ok);
  EXPECT_EQ(caught.error.rfind("wrong output in timed run 3 (", 0), 0u) << caught.error;
  EXPECT_NE(caught.error.find("element 0"), std::string::npos) << caught.error;
  const MeasureResult unpoisoned = measure_isolated(workload(false), o);
  EXPECT_TRUE(unpoisoned.ok) << unpoisoned.error;
  o.check_every_run = false;
  const MeasureResult once = measure_isolated(workload(true), o);
  EXPECT_TRUE(once.ok) << once.error;
  EXPECT_GE(once.runs, 5);
}

// Lines of a file the measuring processes append to (what ran where).
std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void append_line(const std::string& path, const std::string& line) {
  std::ofstream(path, std::ios::app) << line << "\n";
}

// MeasureOptions::processes: one compile, timed in that many processes forked from it, each
// of which unshares its inputs first; the first failure of a timing process (an error, a crash,
// a hang past the run time the compile left) ends the list with its error, and a failed compile
// is the one result.
TEST(Measure, ForkedProcessesTimeOneCompile) {
  const std::string trace = (std::filesystem::temp_directory_path() / "tcost_forks.txt").string();
  // `fail` in the second timing process: "" (none), "crash", "hang" or "wrong".
  const auto workload = [&trace](const std::string& fail) {
    return std::function<Workload()>([&trace, fail] {
      append_line(trace, "compile " + std::to_string(getpid()));
      auto second = std::make_shared<bool>(false);
      Workload w;
      w.run = [second, fail] {
        if (*second && fail == "crash") std::raise(SIGSEGV);
        if (*second && fail == "hang") {
          for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        }
        spin(100000)();
      };
      w.unshare = [&trace, second] {
        const size_t before = lines_of(trace).size();
        // The timing lock is held already (by the compiling process, shared with this one).
        const int other = open((trace + ".lock").c_str(), O_RDWR | O_CREAT, 0644);
        const bool free = flock(other, LOCK_EX | LOCK_NB) == 0;
        close(other);
        append_line(trace, std::string(free ? "unlocked " : "time ") + std::to_string(getpid()));
        *second = before == 2;  // the compile's line, then the first timing process's
      };
      w.check = [second, fail]() -> std::string {
        return *second && fail == "wrong" ? "element 7" : "";
      };
      return w;
    });
  };
  MeasureOptions o;
  o.processes = 3;
  o.lock_path = trace + ".lock";
  std::filesystem::remove(trace);
  const std::vector<MeasureResult> three = measure_processes(workload(""), o);
  ASSERT_EQ(three.size(), 3u);
  const auto lines = lines_of(trace);
  ASSERT_EQ(lines.size(), 4u);  // one compile, three timing processes
  EXPECT_EQ(lines[0].rfind("compile ", 0), 0u);
  for (size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(lines[i].rfind("time ", 0), 0u) << lines[i];
  std::set<std::string> pids;
  for (const auto& line : lines) pids.insert(line.substr(line.find(' ') + 1));
  EXPECT_EQ(pids.size(), 4u);  // each in its own process
  for (const auto& r : three) {
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_GE(r.runs, o.min_runs);
    EXPECT_GT(r.best_ns, 0.0);
    EXPECT_GT(r.process_wall_s, 0.0);
    EXPECT_EQ(r.compile_ms, three[0].compile_ms);  // the one compile's
  }
  const std::vector<std::pair<std::string, std::string>> failures = {
      {"crash", "crashed (signal 11)"}, {"wrong", "wrong output: element 7"}};
  for (const auto& [fail, error] : failures) {
    std::filesystem::remove(trace);
    const std::vector<MeasureResult> r = measure_processes(workload(fail), o);
    ASSERT_EQ(r.size(), 2u) << fail;
    EXPECT_TRUE(r[0].ok) << r[0].error;
    EXPECT_FALSE(r[1].ok);
    EXPECT_EQ(r[1].error, error);
    EXPECT_EQ(lines_of(trace).size(), 3u) << fail;  // no third timing process
  }
  std::filesystem::remove(trace);
  o.timeout_s = 1.0;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<MeasureResult> hung = measure_processes(workload("hang"), o);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  ASSERT_EQ(hung.size(), 2u);
  EXPECT_TRUE(hung[0].ok) << hung[0].error;
  EXPECT_EQ(hung[1].error.rfind("timeout", 0), 0u) << hung[1].error;
  const std::vector<MeasureResult> rejected =
      measure_processes([]() -> Workload { throw std::runtime_error("bad schedule"); }, o);
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].error, "failed: bad schedule");
  // The control (compile_each): three lone measurements, each compiling in its own process, no
  // timing process forked from a compile; the first failure ends them too.
  std::filesystem::remove(trace);
  o.timeout_s = 20;
  o.compile_each = true;
  const std::vector<MeasureResult> each = measure_processes(workload(""), o);
  ASSERT_EQ(each.size(), 3u);
  const auto compiles = lines_of(trace);
  ASSERT_EQ(compiles.size(), 3u);
  std::set<std::string> compiling;
  for (const auto& line : compiles) {
    EXPECT_EQ(line.rfind("compile ", 0), 0u) << line;
    compiling.insert(line);
  }
  EXPECT_EQ(compiling.size(), 3u);
  for (const auto& r : each) {
    EXPECT_TRUE(r.ok) << r.error;
    EXPECT_GT(r.process_wall_s, 0.0);
  }
  EXPECT_EQ(measure_processes([]() -> Workload { throw std::runtime_error("bad"); }, o).size(), 1u);
  std::filesystem::remove(trace);
  std::filesystem::remove(o.lock_path);
}

TEST(Measure, AHangIsCutByTheTimeout) {
  MeasureOptions o;
  o.timeout_s = 1.0;
  const auto t0 = std::chrono::steady_clock::now();
  const MeasureResult r = measure_isolated(
      [] {
        return std::function<void()>([] {
          for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
        });
      },
      o);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("timeout", 0), 0u) << r.error;
  EXPECT_LT(s, 10.0);
}

TEST(Measure, CrashesAndErrorsAreRecorded) {
  MeasureOptions o;
  const MeasureResult crash =
      measure_isolated([] { return std::function<void()>([] { std::raise(SIGSEGV); }); }, o);
  EXPECT_FALSE(crash.ok);
  EXPECT_EQ(crash.error, "crashed (signal 11)");
  const MeasureResult thrown = measure_isolated(
      []() -> std::function<void()> { throw std::runtime_error("bad schedule"); }, o);
  EXPECT_FALSE(thrown.ok);
  EXPECT_EQ(thrown.error, "failed: bad schedule");
  // The parent is unharmed and measures again.
  EXPECT_TRUE(measure_isolated([] { return spin(1000); }, o).ok);
}

// Schedules of one program that differ hugely are measured in the right order: the default
// (serial, scalar, at root) against a tiled, vectorised, parallel one.
TEST(Zoo, FastScheduleMeasuresFasterThanTheDefault) {
  MeasureOptions o;
  o.timeout_s = 60;
  const Program prog = zoo_program("conv3x3_28x32x32");
  const ProgramInfo& p = prog.info();
  const Schedule slow = default_schedule(p);
  Schedule fast = slow;
  fast[0].compute = kAtTile;  // the convolution per tile of the ReLU
  fast[0].vector = 8;
  fast[1].tile_x = 16;
  fast[1].tile_y = 16;
  fast[1].vector = 8;
  fast[1].parallel = true;
  check_schedule(p, fast);
  const MeasureResult a = measure_isolated([&] { return build(prog, slow, 2); }, o);
  const MeasureResult b = measure_isolated([&] { return build(prog, fast, 2); }, o);
  ASSERT_TRUE(a.ok) << a.error;
  ASSERT_TRUE(b.ok) << b.error;
  EXPECT_LT(b.best_ns * 3, a.best_ns) << "fast " << b.best_ns << " default " << a.best_ns;
}

// Producers computed over a region rounded up (or shifted inwards) read their inputs outside
// the consumer's region, also before row 0: inputs carry slack on both sides. These sobel
// schedules read rows -1 and -2 and crashed collections before the slack was added; with
// Halide's bounds asserts on, they now run inside their inputs.
TEST(Zoo, RoundedUpProducersStayInsideTheirInputs) {
  const char* schedules[] = {
      R"([[0,0,0,1,0,1,0,0,0],[2,0,0,1,0,1,0,0,1],[2,0,0,8,0,2,0,0,0],[1,0,0,16,0,1,0,0,0]])",
      R"([[0,0,0,1,0,1,0,0,0],[1,0,0,16,1,2,0,0,1],[2,0,0,16,0,4,0,0,1],[1,0,0,1,1,2,0,0,0]])",
      R"([[2,0,0,1,0,4,0,0,1],[2,0,0,4,0,4,0,0,1],[2,0,0,8,0,1,0,0,0],[1,0,0,1,1,1,0,0,0]])",
      R"([[0,0,0,1,0,1,0,0,0],[2,0,0,8,0,1,0,0,1],[2,0,0,8,0,4,0,0,0],[1,0,0,1,1,2,0,0,0]])",
      R"([[2,0,0,8,0,4,0,0,1],[2,0,0,4,0,1,0,0,0],[2,0,0,16,0,1,0,0,0],[1,0,0,8,1,1,0,0,0]])",
  };
  setenv("TCOST_HALIDE_ASSERTS", "1", 1);  // read in the measuring child process
  MeasureOptions o;
  o.timeout_s = 60;
  o.max_runs = 1;
  o.min_runs = 1;
  const Program sobel = zoo_program("sobel_1024x768");
  for (const char* text : schedules) {
    const Schedule s = schedule_from_json(nlohmann::json::parse(text));
    const MeasureResult r = measure_isolated([&] { return build(sobel, s, 2); }, o);
    EXPECT_TRUE(r.ok) << schedule_key(s) << ": " << r.error;
  }
  unsetenv("TCOST_HALIDE_ASSERTS");
}

// The zoo: at least 20 families and 60 instances, each described consistently.
TEST(Zoo, FamiliesInstancesAndSplits) {
  const auto all = zoo_instances();
  EXPECT_GE(zoo_families().size(), 20u);
  EXPECT_GE(all.size(), 60u);
  std::set<std::string> test_families, valid_families, names;
  for (const auto& in : all) {
    EXPECT_TRUE(names.insert(in.name).second) << in.name;
    if (in.split == Split::kTest) test_families.insert(in.family);
    if (in.split == Split::kValid) valid_families.insert(in.family);
  }
  EXPECT_GE(test_families.size(), 3u);
  EXPECT_GE(valid_families.size(), 3u);
  const ProgramInfo p = zoo_program("resnet_basic_14x64").info();
  EXPECT_EQ(p.family, "resnet_basic");
  EXPECT_FALSE(p.nodes.back().is_input);
  EXPECT_TRUE(p.nodes.back().is_output);
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    for (int q : p.nodes[v].producers) EXPECT_LT(q, static_cast<int>(v));  // topological
  }
  EXPECT_THROW(zoo_program("no_such_program"), InputError);
}

// Sampled schedules are distinct and valid (Halide lowers every one of them) for every family;
// the default comes first.
TEST(Zoo, SampledSchedulesAreValidForEveryFamily) {
  std::set<std::string> done;
  for (const auto& in : zoo_instances()) {
    if (!done.insert(in.family).second) continue;  // one instance per family
    const Program prog = zoo_program(in.name);
    const ProgramInfo& p = prog.info();
    const auto ss = sample_schedules(p, 6, 7);
    ASSERT_EQ(ss.size(), 7u) << in.name;
    EXPECT_EQ(schedule_key(ss[0]), schedule_key(default_schedule(p)));
    std::set<std::string> keys;
    for (const auto& s : ss) {
      EXPECT_TRUE(keys.insert(schedule_key(s)).second);
      EXPECT_NO_THROW(check_schedule(p, s));
      const AstTree t = lower_ast(prog, s);
      EXPECT_GT(t.kinds.size(), 3u) << in.name;
      EXPECT_EQ(t.edges.size(), 2 * (t.kinds.size() - 1)) << in.name;  // a tree
      EXPECT_EQ(t.feats.size(), t.kinds.size() * kAstFeatureWidth);
      EXPECT_EQ(schedule_key(schedule_from_json(schedule_to_json(s))), schedule_key(s));
    }
  }
}

// Lowered syntax trees say how each access walks memory along the two innermost loops, and
// carry the computation's integer arithmetic (not the indices'). matmul's default schedule
// runs its update with the reduction innermost: A(k, y) is contiguous along k, B(x, k) steps a
// row (n + 64 elements) per k, and the output f(x, y) is reused across k and contiguous along x.
TEST(Lower, TreesCarryStridesLanesAndTheValuesArithmetic) {
  const auto feats = [](const AstTree& t, size_t v) { return &t.feats[v * kAstFeatureWidth]; };
  const Program mm = zoo_program("matmul_192");
  const AstTree t = lower_ast(mm, default_schedule(mm.info()));
  const float row = std::log2(1.0f + 192.0f + 64.0f);  // zoo inputs' rows have 64 columns of slack
  int update_loads = 0, update_stores = 0;
  for (size_t v = 0; v < t.kinds.size(); ++v) {
    const float* f = feats(t, v);
    if (t.kinds[v] == kAstLoad && f[kAstLogStride] > 0.5f) {
      // The update's loads: A along k (contiguous), B along k (a row), each along x.
      ++update_loads;
      if (std::abs(f[kAstLogStride] - 1.0f) < 1e-4f) {
        EXPECT_FLOAT_EQ(f[kAstLogOuterStride], 0.0f);  // A(k, y) does not move with x
      } else {
        EXPECT_NEAR(f[kAstLogStride], row, 1e-4f);
        EXPECT_FLOAT_EQ(f[kAstLogOuterStride], 1.0f);  // B(x, k) is contiguous along x
      }
    }
    if (t.kinds[v] == kAstStore && f[kAstLogStride] == 0.0f && f[kAstLogOuterStride] == 1.0f) {
      ++update_stores;
    }
    if (t.kinds[v] == kAstLoad || t.kinds[v] == kAstStore || t.kinds[v] == kAstAdd ||
        t.kinds[v] == kAstMul) {
      EXPECT_FLOAT_EQ(f[kAstLanes], 1.0f);      // the default is scalar
      EXPECT_FLOAT_EQ(f[kAstTypeBits], 32.0f);  // float values; index arithmetic is no node
    }
  }
  EXPECT_EQ(update_loads, 2);  // A and B (the accumulator f(x, y) is reused across k)
  EXPECT_GE(update_stores, 1);

  // Vectorised, the accesses carry their lanes.
  Schedule vec = default_schedule(mm.info());
  vec.back().vector = 8;
  const AstTree tv = lower_ast(mm, vec);
  int wide = 0;
  for (size_t v = 0; v < tv.kinds.size(); ++v) {
    if (tv.kinds[v] == kAstStore && feats(tv, v)[kAstLanes] == 8.0f) ++wide;
  }
  EXPECT_GE(wide, 1);

  // A uint16 blur computes in 16-bit integers: its adds are nodes now.
  const Program blur = zoo_program("box_blur_u16_1024x768");
  const AstTree tb = lower_ast(blur, default_schedule(blur.info()));
  int adds16 = 0;
  for (size_t v = 0; v < tb.kinds.size(); ++v) {
    if (tb.kinds[v] == kAstAdd && feats(tb, v)[kAstTypeBits] == 16.0f) ++adds16;
  }
  EXPECT_GE(adds16, 4);  // blur_x's two, blur_y's two
}

// The strides of every load and store of `t`: per access, along the innermost enclosing loop
// and along the loop around it.
std::vector<float> access_strides(const AstTree& t) {
  std::vector<float> out;
  for (size_t v = 0; v < t.kinds.size(); ++v) {
    if (t.kinds[v] != kAstLoad && t.kinds[v] != kAstStore) continue;
    out.push_back(t.feats[v * kAstFeatureWidth + kAstLogStride]);
    out.push_back(t.feats[v * kAstFeatureWidth + kAstLogOuterStride]);
  }
  return out;
}

// A step that varies along the loops is its mean magnitude over sampled points (lowering 4):
// upsample_conv reads in(x / 2, y / 2, c), which moves 0 and 1 elements on alternate steps of
// x, so its loads step between 0 and 1 (log2 of 1 to 2), and none of its accesses is left
// unknown (-1, which it was before 2026-12-07). embedding_bag's gather reads table rows by a
// loaded index: a step that depends on loaded data stays -1.
TEST(Lower, VaryingStepsAreSampledAndGathersStayUnknown) {
  const auto strides = [](const std::string& name) {
    const Program prog = zoo_program(name);
    return access_strides(lower_ast(prog, default_schedule(prog.info())));
  };
  const std::vector<float> up = strides("upsample_conv_14x64x32");
  EXPECT_EQ(std::count(up.begin(), up.end(), -1.0f), 0);
  EXPECT_GE(std::count_if(up.begin(), up.end(), [](float f) { return f > 0.01f && f < 0.99f; }), 1);
  const std::vector<float> bag = strides("embedding_bag_64x10000x32x256");
  EXPECT_GE(std::count(bag.begin(), bag.end(), -1.0f), 1);
}

// Inside a parallel loop's closure, the values the caller passes (an output's strides and
// minima, an outer loop's variable) read as the caller's, outputs' strides as tcost runs them,
// and a vector index of two vectorised dimensions (a ramp of ramps) by its first lane: no
// access of matmul's sampled schedules (parallel and vectorised ones among them) is left
// unknown. Before lowering 4, these made a quarter of matmul's outer strides -1.
TEST(Lower, ClosuresReadTheirCallersValues) {
  const Program prog = zoo_program("matmul_192");
  int parallel = 0;
  size_t strides = 0;
  for (const Schedule& s : sample_schedules(prog.info(), 3, 6)) {
    const AstTree t = lower_ast(prog, s);
    parallel += static_cast<int>(std::count(t.kinds.begin(), t.kinds.end(), kAstForParallel));
    const std::vector<float> st = access_strides(t);
    strides += st.size();
    EXPECT_EQ(std::count(st.begin(), st.end(), -1.0f), 0);
  }
  EXPECT_GE(parallel, 2);
  EXPECT_GT(strides, 0u);
}

// A loop whose extent depends on where it runs counts at its largest. gram's output reads
// gram(x, y), gram(x, x) and gram(y, y), so gram computed inside a 16x16 tile of the output
// needs the rows and columns of both the tile's ranges: a region whose extent is a min/max of
// the tile's position, up to the whole matrix. Its loops carry that bound, not 1 (before
// 2026-12-02 every non-constant extent was 1, and such a schedule looked cheaper than at root).
// With the output's two outer loops fused in parallel and 16x2 tiles, one extent of gram's
// buffer is a let over the fused variable that Halide's bounds cannot see through until the
// lets are substituted (1 before lowering version 3: 1,984 bytes instead of about a megabyte).
TEST(Lower, ExtentsThatDependOnTheTileCountAtTheirLargest) {
  const Program prog = zoo_program("gram_256x512");
  const ProgramInfo& p = prog.info();
  const std::vector<int> stages = p.stages();
  int gram = -1;
  for (size_t k = 0; k < stages.size(); ++k) {
    if (p.nodes[stages[k]].name == "gram") gram = static_cast<int>(k);
  }
  ASSERT_GE(gram, 0);
  const auto deepest_trips = [](const AstTree& t) {
    float most = 0;
    for (size_t v = 0; v < t.kinds.size(); ++v) {
      if (t.kinds[v] == kAstStore)
        most = std::max(most, t.feats[v * kAstFeatureWidth + kAstLogTrips]);
    }
    return most;
  };
  // Computed per tile, gram's update runs at least as often as once at root (256 x 256 x 512).
  const float at_root = deepest_trips(lower_ast(prog, default_schedule(p)));
  EXPECT_NEAR(at_root, std::log2(1.0f + 256.0f * 256.0f * 512.0f), 0.01f);
  for (const auto& [tile_y, fused] : {std::pair{16, false}, std::pair{2, true}}) {
    Schedule s = default_schedule(p);
    s[gram].compute = kAtTile;
    s[gram].at = -1;
    s.back().tile_x = 16;
    s.back().tile_y = tile_y;
    if (fused) {
      s[gram].vector = 16;
      s[gram].unroll = 4;
      s[gram].reduce_outer = 2;
      s.back().vector = 16;
      s.back().parallel = 2;
    }
    ASSERT_NO_THROW(check_schedule(p, s)) << schedule_key(s);
    const AstTree at_tile = lower_ast(prog, s);
    for (size_t v = 0; v < at_tile.kinds.size(); ++v) {
      if (at_tile.kinds[v] >= kAstForSerial && at_tile.kinds[v] <= kAstForUnrolled) {
        EXPECT_GT(at_tile.feats[v * kAstFeatureWidth + kAstLogExtent], 1.0f)
            << "an extent of 1 in " << schedule_key(s);
      }
    }
    EXPECT_GE(deepest_trips(at_tile), at_root) << schedule_key(s);
    // gram's buffer: a tile at the matrix's corner needs all of it (256 x 256 floats).
    float largest = 0;
    for (size_t v = 0; v < at_tile.kinds.size(); ++v) {
      if (at_tile.kinds[v] == kAstAllocate)
        largest = std::max(largest, at_tile.feats[v * kAstFeatureWidth + kAstBytes]);
    }
    EXPECT_GE(largest, 4.0f * 256 * 256) << schedule_key(s);
  }
}

// The shipped syntax trees are what lower_ast makes of the shipped schedules today (the data and
// the code that reads it agree): a dozen of gram_256x512's schedules, read from the record of
// measurements, found in its tree file by their stage encodings and lowered again.
TEST(Shipped, SyntaxTreesAreTodaysLowering) {
  const std::string root = TCOST_SHIPPED_DATA;
  const AstSet shipped = load_ast(root + "/ast/valid/gram_256x512.npz");
  EXPECT_EQ(shipped.lowering, kAstLowering);
  const Program prog = zoo_program("gram_256x512");
  std::ifstream in(root + "/measurements.jsonl");
  ASSERT_TRUE(in.good());
  std::vector<Schedule> schedules;
  for (std::string line; std::getline(in, line);) {
    if (line.find(R"("instance":"gram_256x512")") == std::string::npos) continue;
    const auto r = nlohmann::json::parse(line);
    if (r.value("pass", 0) == 1 && r.value("ok", false)) {
      schedules.push_back(schedule_from_json(r.at("schedule")));
    }
  }
  ASSERT_GE(schedules.size(), 80u);
  const int64_t row = shipped.config_feat_width;
  int compared = 0;
  for (size_t i = 0; i < schedules.size(); i += 8) {
    const Graph lay = layout_graph(prog.info(), {schedules[i]}, {});
    ASSERT_EQ(static_cast<int64_t>(lay.config_feat.size()), row);
    int64_t c = 0;
    while (c < shipped.num_configs && !std::equal(lay.config_feat.begin(), lay.config_feat.end(),
                                                  shipped.config_feat.begin() + c * row)) {
      ++c;
    }
    if (c == shipped.num_configs) continue;  // never measured on the data's CPU
    const AstSet one = select_ast_configs(shipped, {c});
    const AstTree t = lower_ast(prog, schedules[i]);
    EXPECT_EQ(t.kinds, one.kinds) << schedule_key(schedules[i]);
    EXPECT_EQ(t.feats, one.feats) << schedule_key(schedules[i]);
    EXPECT_EQ(t.edges, one.edges) << schedule_key(schedules[i]);
    ++compared;
  }
  EXPECT_GE(compared, 10);
}

// The tuner's local step: a tweak changes one stage of its parent, stays valid (Halide lowers
// it), and a chain of tweaks walks to many distinct schedules.
TEST(Zoo, TweaksChangeOneStageAndStayValid) {
  std::set<std::string> done;
  std::mt19937_64 rng(11);
  for (const auto& in : zoo_instances()) {
    if (!done.insert(in.family).second) continue;
    const Program prog = zoo_program(in.name);
    const ProgramInfo& p = prog.info();
    Schedule s = sample_schedules(p, 1, 3).back();
    std::set<std::string> seen = {schedule_key(s)};
    for (int i = 0; i < 12; ++i) {
      const auto t = tweak_schedule(p, s, rng);
      ASSERT_TRUE(t.has_value()) << in.name;
      ASSERT_EQ(t->size(), s.size());
      int changed = 0;
      for (size_t k = 0; k < s.size(); ++k) changed += (*t)[k] == s[k] ? 0 : 1;
      EXPECT_EQ(changed, 1) << in.name;
      EXPECT_NO_THROW(check_schedule(p, *t));
      if (i % 4 == 0) {
        EXPECT_GT(lower_ast(prog, *t).kinds.size(), 3u) << in.name;
      }
      seen.insert(schedule_key(*t));
      s = *t;
    }
    EXPECT_GE(seen.size(), 6u) << in.name;
  }
}

// Sketches: valid (Halide lowers them), distinct, the same for the same seed, never the
// default; and they carry the structure they are for: on a convolution chain, reductions
// computed inside a consumer's tile with their accumulators in registers (the reduction
// outside every pure loop), and register-tiled root stages with parallel outer loops.
TEST(Zoo, SketchesAreValidStructuredAndSeeded) {
  std::set<std::string> done;
  for (const auto& in : zoo_instances()) {
    if (!done.insert(in.family).second) continue;
    const Program prog = zoo_program(in.name);
    const ProgramInfo& p = prog.info();
    const auto ss = sketch_schedules(p, 8, 1);
    ASSERT_GE(ss.size(), 2u) << in.name;
    std::set<std::string> keys = {schedule_key(default_schedule(p))};
    for (size_t i = 0; i < ss.size(); ++i) {
      EXPECT_TRUE(keys.insert(schedule_key(ss[i])).second) << in.name;
      EXPECT_NO_THROW(check_schedule(p, ss[i])) << in.name;
      if (i < 2) {
        EXPECT_GT(lower_ast(prog, ss[i]).kinds.size(), 3u) << in.name;
      }
    }
    const auto again = sketch_schedules(p, 8, 1);
    ASSERT_EQ(again.size(), ss.size());
    for (size_t i = 0; i < ss.size(); ++i) EXPECT_EQ(schedule_key(again[i]), schedule_key(ss[i]));
    const auto other = sketch_schedules(p, 8, 2);
    bool differs = other.size() != ss.size();
    for (size_t i = 0; !differs && i < ss.size(); ++i)
      differs = schedule_key(other[i]) != schedule_key(ss[i]);
    EXPECT_TRUE(differs) << in.name;
  }
  const Program prog = zoo_program("resnet_bottleneck_14x256x64");
  const ProgramInfo& p = prog.info();
  const std::vector<int> stages = p.stages();
  int at_tile_reductions = 0, register_tiles = 0;
  for (const auto& s : sketch_schedules(p, 40, 3)) {
    for (size_t k = 0; k < s.size(); ++k) {
      const NodeInfo& n = p.nodes[stages[k]];
      // The widest vector that fits the rows (16 lanes; 8 on rows of 8 to 15).
      const int lanes = n.dims[0] >= 16 ? 16 : 8;
      if (n.has_update && s[k].compute == kAtTile) {
        EXPECT_EQ(s[k].reduce_outer, 2);
        EXPECT_EQ(s[k].vector, lanes);
        ++at_tile_reductions;
      }
      if (s[k].compute == kRoot && s[k].tile_x > 0) {
        EXPECT_EQ(s[k].tile_x % lanes, 0);
        EXPECT_GT(s[k].parallel, 0);
        if (n.has_update) {
          EXPECT_EQ(s[k].reduce_outer, 1);
        }
        ++register_tiles;
      }
      if (!n.has_update && n.window == 0 && !n.is_output) {
        EXPECT_NE(s[k].compute, kAtTile);
      }
    }
  }
  EXPECT_GT(at_tile_reductions, 10);
  EXPECT_GT(register_tiles, 40);
}

TEST(Zoo, InvalidSchedulesAreRejectedWithAClearError) {
  const Program prog = zoo_program("softmax_512x512");
  const ProgramInfo& p = prog.info();
  Schedule s = default_schedule(p);
  EXPECT_NO_THROW(check_schedule(p, s));
  Schedule wrong = s;
  wrong.pop_back();
  EXPECT_THROW(check_schedule(p, wrong), InputError);
  wrong = s;
  wrong[0].compute = kInline;  // rowmax has an update: it cannot be inlined
  EXPECT_THROW(check_schedule(p, wrong), InputError);
  wrong = s;
  wrong[1].compute = kAtTile;  // expo at the output's tile, but rowsum (at root) reads it
  EXPECT_THROW(check_schedule(p, wrong), InputError);
  wrong = s;
  wrong.back().vector = 3;
  EXPECT_THROW(check_schedule(p, wrong), InputError);
  EXPECT_THROW(schedule_from_json(nlohmann::json::parse("[[1,2]]")), InputError);
  EXPECT_THROW(build(prog, wrong, 1), InputError);
}

TEST(Zoo, StageEncodingIsCategoricalAndDocumented) {
  const ProgramInfo p = zoo_program("conv3x3_28x32x32").info();
  StageSchedule st;
  st.compute = kAtTile;
  st.vector = 8;
  st.storage = 2;
  st.unroll = 2;
  float f[kStageConfigWidth];
  encode_stage(p.nodes[p.stages()[0]], 0, st, f);
  EXPECT_EQ(f[0], 2);  // channels innermost: minor-to-major (2, 0, 1)
  EXPECT_EQ(f[1], 0);
  EXPECT_EQ(f[2], 1);
  EXPECT_EQ(f[3], -1);
  EXPECT_EQ(f[6], -1);  // untiled
  EXPECT_EQ(f[8], kAtTile);
  EXPECT_EQ(f[9], 2);   // vector 8
  EXPECT_EQ(f[11], 1);  // unroll 2
  for (float v : f) {
    EXPECT_GE(v, -1);
    EXPECT_LE(v, 6);
  }
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("tcost_halide_") + name + "_" + std::to_string(getpid()) + ".jsonl"))
      .string();
}

// An empty directory of this test process, tcost_NAME_PID, under the temporary directory.
std::filesystem::path fresh_dir(const char* name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   (std::string("tcost_") + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  return dir;
}

// Options of a small collection into `dir`: matmul_192, the default schedule and `samples`
// sampled schedules, no syntax trees.
CollectOptions small_collection(const std::filesystem::path& dir, int samples) {
  CollectOptions o;
  o.out = dir.string();
  o.pipelines = "matmul_192";
  o.configs_per_graph = samples;
  o.ast = false;
  return o;
}

// Measures the collection `o` and returns its records, each of which must have succeeded.
std::vector<nlohmann::json> measured_records(const CollectOptions& o) {
  collect(o);
  auto records =
      ResultLog((std::filesystem::path(o.out) / "measurements.jsonl").string()).records();
  for (const auto& r : records) EXPECT_TRUE(r.value("ok", false)) << r.at("key");
  return records;
}

// Replaces a measurement log with `records`, one JSON line each.
void write_log(const std::filesystem::path& path, const std::vector<nlohmann::json>& records) {
  std::ofstream out(path, std::ios::trunc);
  for (const auto& r : records) out << r.dump() << "\n";
}

// A collection killed mid-way keeps every finished record; a restart skips them and goes on.
TEST(ResultLog, KillAndRestartKeepsEveryFinishedRecord) {
  const std::string path = temp_path("kill");
  std::filesystem::remove(path);
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    ResultLog log(path);
    for (int i = 0;; ++i) {
      log.append({{"key", "config-" + std::to_string(i)}, {"runtime_ns", 1000 + i}});
      if (i == 20) {
        const char c = 'x';
        if (write(fds[1], &c, 1) != 1) _exit(1);  // tell the parent: 21 records are on disk
      }
    }
  }
  close(fds[1]);
  char c = 0;
  ASSERT_EQ(read(fds[0], &c, 1), 1);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  close(fds[0]);
  ResultLog log(path);
  const size_t kept = log.records().size();
  EXPECT_GE(kept, 21u);
  for (size_t i = 0; i < kept; ++i) {
    EXPECT_TRUE(log.done("config-" + std::to_string(i)));
    EXPECT_EQ(log.records()[i]["runtime_ns"].get<int>(), 1000 + static_cast<int>(i));
  }
  log.append({{"key", "after-restart"}});
  ResultLog again(path);
  EXPECT_EQ(again.records().size(), kept + 1);
  std::filesystem::remove(path);
}

TEST(ResultLog, ACutLastLineIsDroppedAndOtherDamageIsAnError) {
  const std::string path = temp_path("cut");
  {
    std::ofstream out(path, std::ios::trunc);
    out << R"({"key":"a","v":1})"
        << "\n"
        << R"({"key":"b","v")";
  }
  {
    ResultLog log(path);
    EXPECT_EQ(log.records().size(), 1u);
    EXPECT_TRUE(log.done("a"));
    EXPECT_FALSE(log.done("b"));
    log.append({{"key", "b"}, {"v", 2}});
  }
  EXPECT_EQ(ResultLog(path).records().size(), 2u);
  {
    std::ofstream out(path, std::ios::trunc);
    out << "garbage\n"
        << R"({"key":"a"})"
        << "\n";
  }
  EXPECT_THROW(ResultLog log(path), InputError);
  std::filesystem::remove(path);
}

// tcost collect on one small program: every schedule measured once, the layout, tile and
// syntax-tree files written in their schemas, and a second run measures nothing again.
TEST(Collect, MeasuresWritesAndResumes) {
  const auto dir = fresh_dir("collect");
  CollectOptions o;
  o.out = dir.string();
  o.pipelines = "matmul_192";
  o.configs_per_graph = 4;
  const CollectSummary first = collect(o);
  EXPECT_EQ(first.measured + first.failed, 5);  // the default schedule and 4 samples
  EXPECT_EQ(first.layout_written, 1);
  EXPECT_EQ(first.tile_written, 1);
  EXPECT_EQ(first.ast_written, 1);
  const Graph g = load_graph((dir / "tile/train/matmul_192.npz").string());
  EXPECT_EQ(g.collection, Collection::kTile);
  EXPECT_EQ(g.num_configs, first.measured);
  EXPECT_EQ(g.config_feat_width, kTileConfigWidth);
  EXPECT_DOUBLE_EQ(g.target(0), static_cast<double>(g.runtime_ns[0]) / g.normalizer_ns[0]);
  const Graph l = load_graph((dir / "layout/train/matmul_192.npz").string());
  EXPECT_EQ(l.collection, Collection::kLayout);
  EXPECT_EQ(l.num_configs, first.measured);
  EXPECT_EQ(l.config_feat_width, kStageConfigWidth);
  EXPECT_EQ(l.num_config_nodes(), 1);
  EXPECT_EQ(l.runtime_ns, g.runtime_ns);
  const AstSet a = load_ast((dir / "ast/train/matmul_192.npz").string());
  EXPECT_EQ(a.num_configs, first.measured);
  EXPECT_EQ(a.runtime_ns, g.runtime_ns);
  const CollectSummary again = collect(o);
  EXPECT_EQ(again.measured, 0);
  EXPECT_EQ(again.skipped, 5);
  // A rewrite keeps the syntax trees of a file whose configurations are the same schedules and
  // rewrites only its runtimes (marked trees stay marked); a file whose schedules differ is
  // lowered again.
  {
    const auto ast_path = (dir / "ast/train/matmul_192.npz").string();
    AstSet marked = a;
    marked.feats[0] += 1000;
    marked.runtime_ns.assign(marked.runtime_ns.size(), 1);
    save_ast(ast_path, marked, true);
    CollectOptions rewrite = o;
    rewrite.measure = false;
    collect(rewrite);
    AstSet kept = load_ast(ast_path);
    EXPECT_EQ(kept.runtime_ns, g.runtime_ns);
    EXPECT_EQ(kept.feats[0], a.feats[0] + 1000);
    // Trees that another version of the lowering made are lowered again, though the schedules
    // are the same.
    EXPECT_EQ(a.lowering, kAstLowering);
    AstSet stale = kept;
    stale.lowering = kAstLowering - 1;
    save_ast(ast_path, stale, true);
    collect(rewrite);
    const AstSet relowered = load_ast(ast_path);
    EXPECT_EQ(relowered.feats, a.feats);
    EXPECT_EQ(relowered.lowering, kAstLowering);
    kept.config_feat[0] += 1;
    save_ast(ast_path, kept, true);
    collect(rewrite);
    const AstSet lowered = load_ast(ast_path);
    EXPECT_EQ(lowered.feats, a.feats);
    EXPECT_EQ(lowered.config_feat, a.config_feat);
    EXPECT_EQ(lowered.runtime_ns, g.runtime_ns);
  }
  // A second pass over half the schedules gives the tau between two measurements; it does not
  // add configurations to the dataset.
  o.remeasure = 0.5;
  const CollectSummary noise = collect(o);
  EXPECT_GE(noise.remeasured_pairs, 2);
  EXPECT_GE(noise.remeasure_tau, -1.0);
  EXPECT_LE(noise.remeasure_tau, 1.0);
  EXPECT_EQ(load_graph((dir / "tile/train/matmul_192.npz").string()).num_configs, g.num_configs);
  o.remeasure = 0;
  o.pipelines = "nothing*";
  EXPECT_THROW(collect(o), UsageError);
  std::filesystem::remove_all(dir);
}

// --passes 2 measures every schedule twice, pass after pass, and the datasets keep the minimum;
// --cross-session then measures the schedules again twice, measures nothing new, and the
// manifest's noise block compares minimum with minimum.
TEST(Collect, PassesKeepTheMinimumAndCrossSessionComparesThem) {
  const auto dir = fresh_dir("passes");
  CollectOptions o = small_collection(dir, 2);
  o.passes = 2;
  collect(o);
  std::vector<nlohmann::json> records;
  {
    const ResultLog log((dir / "measurements.jsonl").string());
    records = log.records();
    const Graph g = load_graph((dir / "layout/train/matmul_192.npz").string());
    int firsts = 0;
    for (const auto& rec : records) {
      if (rec.value("pass", 1) != 1 || !rec.value("ok", false)) continue;
      const nlohmann::json* again = log.find(repeat_key(rec.at("key").get<std::string>(), 2));
      ASSERT_NE(again, nullptr) << rec.at("key");
      EXPECT_EQ(again->value("pass", 0), 5);
      const double best = std::min(rec.value("best_ns", 0.0), again->value("best_ns", 0.0));
      EXPECT_EQ(g.runtime_ns[static_cast<size_t>(firsts)], static_cast<int64_t>(best));
      ++firsts;
    }
    EXPECT_EQ(firsts, g.num_configs);
    EXPECT_EQ(records.size(), static_cast<size_t>(2 * firsts));
  }
  // One schedule's only measurement under this target failed (its first pass was taken under
  // another): it has no runtime under the target to compare with, so the later run skips it.
  const std::string skipped = records[2].at("key").get<std::string>();
  ASSERT_EQ(records[2].value("pass", 1), 1);
  ASSERT_TRUE(records[2].value("ok", false));
  for (auto& r : records) {
    if (r.at("key") == skipped) r["target"] = "x86-64-linux-another";
    if (r.at("key") == repeat_key(skipped, 2)) r["ok"] = false;
  }
  // Every record names the CPU it was measured on, and the boot (where the kernel says it). Say
  // the data was measured on another CPU: the later run's block must tell that it was not.
  std::string boot;
  std::getline(std::ifstream("/proc/sys/kernel/random/boot_id"), boot);
  for (auto& r : records) {
    EXPECT_EQ(r.value("cpu", "?"), cpu_model()) << r.at("key");
    EXPECT_EQ(r.value("boot", ""), boot) << r.at("key");
    r["cpu"] = "Another CPU";
  }
  write_log(dir / "measurements.jsonl", records);
  {
    std::ifstream in(dir / "manifest.json");
    auto m = nlohmann::json::parse(in);
    EXPECT_EQ(m.at("machine").at("cpu"), cpu_model());
    m["machine"]["cpu"] = "Another CPU";
    std::ofstream(dir / "manifest.json") << m.dump();
  }
  // One collection holds one CPU's runtimes: measuring more of it here is refused, untouched.
  EXPECT_THROW(collect(o), InputError);
  EXPECT_EQ(ResultLog((dir / "measurements.jsonl").string()).records().size(), records.size());
  o.cross_session = 3;
  o.session = "later";
  o.configs_per_graph = 10;  // would plan new schedules: a cross-session run measures none
  collect(o);
  const ResultLog log((dir / "measurements.jsonl").string());
  EXPECT_EQ(log.records().size(), records.size() + 4);  // 2 schedules, 2 passes each
  EXPECT_EQ(log.find("session|later|" + skipped), nullptr);
  const CrossSession c = cross_session_noise(log, "Another CPU");
  EXPECT_EQ(c.session, "later");
  EXPECT_EQ(c.cpu, cpu_model());
  EXPECT_EQ(c.pairs, 2);
  // Against the runtimes of this CPU there are none: the data's are all on the other one.
  EXPECT_EQ(cross_session_noise(log, cpu_model()).pairs, 0);
  EXPECT_GT(c.ratio_p50, 0.0);
  // The cost per schedule counts both passes of the later run: the time in which its
  // measurements ran, over 2 schedules, at most its elapsed time.
  double start = 1e300, end = 0;
  for (const auto& r : log.records()) {
    const std::string key = r.at("key");
    if (key.find("session|later|") == std::string::npos) continue;
    start = std::min(start, r.value("finished", 0.0) - r.value("wall_s", 0.0));
    end = std::max(end, r.value("finished", 0.0));
  }
  EXPECT_GT(c.seconds_per_schedule, 0.0);
  EXPECT_LE(c.seconds_per_schedule, (end - start) / 2 + 1e-9);
  {
    // Resumed an hour later for its second pass (the same session name): the pause is no cost.
    std::vector<nlohmann::json> resumed = log.records();
    for (auto& r : resumed) {
      const std::string key = r.at("key");
      if (key.rfind("repeat|", 0) == 0 && key.find("session|later|") != std::string::npos)
        r["finished"] = r.value("finished", 0.0) + 3600.0;
    }
    const std::filesystem::path paused = dir / "paused.jsonl";
    write_log(paused, resumed);
    EXPECT_NEAR(cross_session_noise(ResultLog(paused.string()), "Another CPU").seconds_per_schedule,
                c.seconds_per_schedule, 1e-6);
    std::filesystem::remove(paused);
  }
  std::ifstream in(dir / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  EXPECT_EQ(manifest.at("noise").at("cross_session").at("session"), "later");
  EXPECT_EQ(manifest.at("noise").at("cross_session").at("run").at("cpu"), cpu_model());
  EXPECT_EQ(manifest.at("machine").at("cpu"), "Another CPU");  // the data's, kept
  EXPECT_EQ(manifest.at("noise").at("cross_session").at("same_cpu_as_data"), false);
  EXPECT_EQ(manifest.at("noise").at("cross_session_runs").at("later").at("run").at("cpu"),
            cpu_model());
  EXPECT_EQ(manifest.at("protocol").at("passes"), 2);
  const auto& within = manifest.at("noise").at("cross_session").at("ratio_within_program");
  EXPECT_DOUBLE_EQ(within.at("p90").get<double>(), c.within_p90);
  // The later run on a machine twice as slow for this program: every ratio doubles, the
  // spread within the program does not move.
  std::vector<nlohmann::json> slower = log.records();
  for (auto& r : slower) {
    if (r.at("key").get<std::string>().find("session|later|") != std::string::npos)
      r["best_ns"] = 2 * r.value("best_ns", 0.0);
  }
  write_log(dir / "measurements.jsonl", slower);
  const CrossSession s =
      cross_session_noise(ResultLog((dir / "measurements.jsonl").string()), "Another CPU");
  EXPECT_DOUBLE_EQ(s.ratio_p50, 2 * c.ratio_p50);
  EXPECT_DOUBLE_EQ(s.within_p10, c.within_p10);
  EXPECT_DOUBLE_EQ(s.within_p90, c.within_p90);
  EXPECT_LE(s.within_p10, 1.0);
  EXPECT_GE(s.within_p90, 1.0);
  std::filesystem::remove_all(dir);
}

// --forks 2 --passes 2: every schedule measured four times, two timing processes per compile
// in each pass (records say which fork they were), the datasets keep the minimum of the four,
// the manifest states the forks, a rerun measures nothing, and a later run (--cross-session)
// times its schedules in forks too. The buffers lie in the arena (--arena), and every forked
// measurement's outputs are checked (--check).
TEST(Collect, ForksTimeEachCompileInSeveralProcesses) {
  const auto dir = fresh_dir("forks");
  CollectOptions o = small_collection(dir, 2);
  o.passes = 2;
  o.forks = 2;
  o.placement = Placement::arena;
  o.check = true;
  const CollectSummary s = collect(o);
  EXPECT_EQ(s.measured + s.failed, 12);  // 3 schedules x 2 passes x 2 forks
  {
    const ResultLog log((dir / "measurements.jsonl").string());
    const Graph g = load_graph((dir / "layout/train/matmul_192.npz").string());
    ASSERT_EQ(g.num_configs, 3);
    int firsts = 0;
    for (const auto& rec : log.records()) {
      if (rec.value("pass", 1) != 1) continue;
      ASSERT_TRUE(rec.value("ok", false)) << rec.dump();
      EXPECT_TRUE(rec.value("checked", false));
      EXPECT_EQ(rec.value("fork", 0), 1);
      const auto passes = passes_of(log, rec);
      ASSERT_EQ(passes.size(), 4u) << rec.at("key");
      double best = rec.value("best_ns", 0.0);
      for (size_t k = 1; k < passes.size(); ++k) {
        EXPECT_EQ(passes[k]->value("pass", 0), 5);
        EXPECT_EQ(passes[k]->value("fork", 0), k % 2 == 0 ? 1 : 2);  // two compiles, two forks
        EXPECT_GT(passes[k]->value("process_wall_s", 0.0), 0.0);
        best = std::min(best, passes[k]->value("best_ns", 0.0));
      }
      EXPECT_EQ(g.runtime_ns[static_cast<size_t>(firsts)], static_cast<int64_t>(best));
      ++firsts;
    }
    EXPECT_EQ(firsts, 3);
  }
  std::ifstream in(dir / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  EXPECT_EQ(manifest.at("protocol").at("forks"), 2);
  EXPECT_EQ(manifest.at("protocol").at("buffers"), "arena");
  EXPECT_EQ(manifest.at("counts").at("schedules_by_measurements_on_data_cpu").at("4"), 3);
  const CollectSummary again = collect(o);
  EXPECT_EQ(again.measured + again.failed, 0);
  o.cross_session = 2;
  o.session = "later";
  o.passes = 1;
  const CollectSummary later = collect(o);
  EXPECT_EQ(later.measured + later.failed, 4);  // 2 schedules, one compile each, 2 forks
  const ResultLog log((dir / "measurements.jsonl").string());
  int sessions = 0;
  for (const auto& rec : log.records()) {
    if (rec.value("pass", 1) != 4) continue;
    ++sessions;
    ASSERT_NE(log.find(repeat_key(rec.at("key").get<std::string>(), 2)), nullptr);
    EXPECT_EQ(log.find(repeat_key(rec.at("key").get<std::string>(), 3)), nullptr);
  }
  EXPECT_EQ(sessions, 2);
  std::filesystem::remove_all(dir);
}

// --recorded --passes 2 samples nothing: it measures the schedules on record again until each
// has two measurements under this run's target. A schedule first measured under another target
// gets two new ones, and its old runtime no longer counts.
TEST(Collect, RecordedBringsEverySchedulesMeasurementsToThePasses) {
  const auto dir = fresh_dir("recorded");
  CollectOptions o = small_collection(dir, 2);
  collect(o);
  const auto path = dir / "measurements.jsonl";
  std::vector<nlohmann::json> records;
  {
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(records.size(), 3u);  // the default and 2 samples, measured once
  ASSERT_TRUE(records[1].value("ok", false));
  const std::string current = records[1].at("target").get<std::string>();
  // As if measured under another target, impossibly fast: it must not count any more.
  records[1]["target"] = "x86-64-linux-another";
  records[1]["best_ns"] = 1.0;
  write_log(path, records);
  o.recorded = true;
  o.passes = 2;
  o.configs_per_graph = 10;  // would plan new schedules: --recorded measures none
  const CollectSummary s = collect(o);
  EXPECT_EQ(s.measured + s.failed, 4);  // one repeat each, two for the retargeted one
  const ResultLog log(path.string());
  EXPECT_EQ(log.records().size(), 7u);
  const std::string key = records[1].at("key").get<std::string>();
  const nlohmann::json* r2 = log.find(repeat_key(key, 2));
  const nlohmann::json* r3 = log.find(repeat_key(key, 3));
  ASSERT_NE(r2, nullptr);
  ASSERT_NE(r3, nullptr);
  EXPECT_EQ(r2->value("target", ""), current);
  EXPECT_EQ(passes_under(log, *log.find(key), MeasuredOn{current, cpu_model()}), 2);
  EXPECT_EQ(log.find(repeat_key(records[0].at("key").get<std::string>(), 3)), nullptr);
  const double best = runtime_of_passes(log, *log.find(key), MeasuredOn{current, cpu_model()});
  EXPECT_EQ(best, std::min(r2->value("best_ns", 0.0), r3->value("best_ns", 0.0)));
  EXPECT_EQ(runtime_of_passes(log, *log.find(key)), 1.0);  // without a target, every pass counts
  const Graph g = load_graph((dir / "layout/train/matmul_192.npz").string());
  ASSERT_EQ(g.num_configs, 3);
  EXPECT_EQ(g.runtime_ns[1], static_cast<int64_t>(best));
  std::ifstream in(dir / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  EXPECT_EQ(manifest.at("counts").at("schedules_by_measurements_on_data_cpu").at("2"), 3);
  const CollectSummary again = collect(o);
  EXPECT_EQ(again.measured + again.failed, 0);
  std::filesystem::remove_all(dir);
}

// --schedules-from DIR measures another collection's schedules instead of a sample: those whose
// first measurement succeeded on DIR's CPU, under the same keys; DIR is only read (a line cut
// short at its end stays as it was).
TEST(Collect, SchedulesFromAnotherCollectionAreMeasuredUnderTheirKeys) {
  const auto from = fresh_dir("schedules_from_a"), dir = fresh_dir("schedules_from_b");
  collect(small_collection(from, 3));
  const auto path = from / "measurements.jsonl";
  std::vector<nlohmann::json> records = ResultLog(path.string()).records();
  ASSERT_EQ(records.size(), 4u);    // the default and 3 samples
  records[2]["cpu"] = "Other CPU";  // not in the datasets: left out
  records[3]["ok"] = false;         // failed: left out
  write_log(path, records);
  { std::ofstream(path, std::ios::app) << R"({"key": "cut sh)"; }
  const auto bytes = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  const std::string before = bytes(path);

  CollectOptions o = small_collection(dir, 10);  // would sample 10: --schedules-from samples none
  o.schedules_from = from.string();
  const CollectSummary s = collect(o);
  EXPECT_EQ(s.measured + s.failed, 2);
  const ResultLog log((dir / "measurements.jsonl").string());
  ASSERT_EQ(log.records().size(), 2u);  // in the order they finished (two workers)
  for (int i : {0, 1}) {
    const nlohmann::json* r = log.find(records[static_cast<size_t>(i)].at("key"));
    ASSERT_NE(r, nullptr) << i;
    EXPECT_EQ(r->at("schedule"), records[static_cast<size_t>(i)].at("schedule"));
  }
  EXPECT_EQ(bytes(path), before);
  std::ifstream in(dir / "manifest.json");
  EXPECT_EQ(nlohmann::json::parse(in).at("protocol").at("schedules_from"), from.string());
  EXPECT_EQ(collect(o).measured, 0);  // resumes: nothing left

  CollectOptions bad = o;
  bad.recorded = true;
  EXPECT_THROW(collect(bad), UsageError);
  bad = o;
  bad.schedules_from = dir.string();  // itself
  EXPECT_THROW(collect(bad), UsageError);
  bad = o;
  bad.schedules_from = (dir / "missing").string();
  EXPECT_THROW(collect(bad), InputError);
  EXPECT_THROW(ResultLog::read_only(path.string()).append({{"key", "x"}}), InternalError);
  std::filesystem::remove_all(from);
  std::filesystem::remove_all(dir);
}

// A run with a longer --timeout measures again what timed out under a shorter one (not what
// timed out under the same): the new record supersedes the old in records(), in its place,
// and the file keeps both lines.
TEST(Collect, ALongerTimeoutRetriesWhatTimedOutSooner) {
  const auto dir = fresh_dir("retry_timeouts");
  CollectOptions o = small_collection(dir, 3);
  o.max_run_seconds = 0.05;
  collect(o);
  const auto path = dir / "measurements.jsonl";
  std::vector<nlohmann::json> records = ResultLog(path.string()).records();
  ASSERT_EQ(records.size(), 4u);
  for (size_t i : {1, 2}) {
    records[i]["ok"] = false;
    records[i]["best_ns"] = 0.0;
    records[i]["error"] = timeout_error(i == 1 ? 1.0 : 10.0);
  }
  write_log(path, records);
  EXPECT_TRUE(timed_out_sooner(records[1], o.timeout_s));
  EXPECT_FALSE(timed_out_sooner(records[2], o.timeout_s));
  EXPECT_FALSE(timed_out_sooner(records[0], o.timeout_s));
  const CollectSummary s = collect(o);
  EXPECT_EQ(s.measured + s.failed, 1);
  const ResultLog log(path.string());
  ASSERT_EQ(log.records().size(), 4u);
  EXPECT_EQ(log.records()[1].at("key"), records[1].at("key"));
  EXPECT_TRUE(log.records()[1].value("ok", false));
  EXPECT_EQ(log.find(records[1].at("key")), &log.records()[1]);
  EXPECT_EQ(log.find(records[2].at("key"))->value("error", ""), timeout_error(10.0));
  std::ifstream in(path);
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 5);
  EXPECT_EQ(collect(o).measured, 0);
  std::filesystem::remove_all(dir);
}

// --neighbours: schedules one decision away from the fastest sampled ones, counted per program
// (a rerun measures only what is lacking), marked in their records, measured with the passes.
TEST(Collect, NeighboursAreDrawnAroundTheFastestSchedules) {
  const auto dir = fresh_dir("neighbours");
  CollectOptions o = small_collection(dir, 6);
  o.max_run_seconds = 0.05;
  o.neighbours = 3;
  o.neighbour_parents = 2;
  const CollectSummary s = collect(o);
  EXPECT_EQ(s.neighbours_tried, 3);
  const auto first_records = [&] {
    std::vector<nlohmann::json> sampled, neighbours;
    const ResultLog log((dir / "measurements.jsonl").string());
    for (const auto& r : log.records()) {
      if (r.value("pass", 1) != 1) continue;
      (r.value("origin", "") == "neighbour" ? neighbours : sampled).push_back(r);
    }
    return std::make_pair(sampled, neighbours);
  };
  auto [sampled, neighbours] = first_records();
  ASSERT_EQ(sampled.size(), 7u);  // the default and 6 samples
  ASSERT_EQ(neighbours.size(), 3u);
  // The parents: the two fastest samples. Each neighbour is new and one decision from one of
  // them (a tile step moves up to four fields of the stage).
  std::sort(sampled.begin(), sampled.end(), [](const auto& a, const auto& b) {
    return a.at("best_ns").template get<double>() < b.at("best_ns").template get<double>();
  });
  std::set<std::string> keys;
  for (const auto& r : sampled) keys.insert(r.at("key").get<std::string>());
  for (const auto& n : neighbours) {
    EXPECT_TRUE(keys.insert(n.at("key").get<std::string>()).second) << n.at("key");
    int fewest = 1000;
    for (size_t i = 0; i < 2; ++i) {
      const auto &a = sampled[i].at("schedule"), &b = n.at("schedule");
      ASSERT_EQ(a.size(), b.size());
      int differ = 0;
      for (size_t st = 0; st < a.size(); ++st) {
        for (size_t f = 0; f < std::max(a[st].size(), b[st].size()); ++f) {
          const int x = f < a[st].size() ? a[st][f].get<int>() : -1;
          const int y = f < b[st].size() ? b[st][f].get<int>() : -1;
          differ += x != y ? 1 : 0;
        }
      }
      fewest = std::min(fewest, differ);
    }
    EXPECT_GE(fewest, 1);
    EXPECT_LE(fewest, 4) << n.at("key");
  }
  {
    std::ifstream in(dir / "manifest.json");
    const auto m = nlohmann::json::parse(in);
    EXPECT_EQ(m.at("protocol").at("neighbours").at("per_program"), 3);
    EXPECT_EQ(m.at("counts").at("neighbour_schedules").at("tried"), 3);
  }
  const Graph g = load_graph((dir / "layout/train/matmul_192.npz").string());
  const auto ok = [](const std::vector<nlohmann::json>& rs) {
    return std::count_if(rs.begin(), rs.end(), [](const auto& r) { return r.value("ok", false); });
  };
  EXPECT_EQ(g.num_configs, ok(sampled) + ok(neighbours));
  // Rerun: nothing lacking. Five asked: two more. Two passes: every neighbour gets its second.
  const CollectSummary again = collect(o);
  EXPECT_EQ(again.measured + again.failed, 0);
  o.neighbours = 5;
  o.passes = 2;
  const CollectSummary more = collect(o);
  EXPECT_EQ(more.neighbours_tried, 2);
  neighbours = first_records().second;
  ASSERT_EQ(neighbours.size(), 5u);
  const ResultLog log((dir / "measurements.jsonl").string());
  for (const auto& n : neighbours) {
    if (n.value("ok", false)) {
      EXPECT_EQ(passes_of(log, n).size(), 2u) << n.at("key");
    }
  }

  // --recorded: no sample drawn, only the neighbours (here: 2 more of a larger sample's).
  CollectOptions recorded = o;
  recorded.configs_per_graph = 50;
  recorded.recorded = true;
  recorded.neighbours = 7;
  const CollectSummary only = collect(recorded);
  EXPECT_EQ(only.neighbours_tried, 2);
  EXPECT_EQ(only.measured + only.failed, 4);  // two new, each with its second pass
  EXPECT_EQ(first_records().first.size(), 7u);

  CollectOptions bad = o;
  bad.neighbours = -1;
  EXPECT_THROW(collect(bad), UsageError);
  bad.neighbours = 3;
  bad.cross_session = 5;
  EXPECT_THROW(collect(bad), UsageError);
  std::filesystem::remove_all(dir);
}

// --at-least N tops up a program whose datasets hold fewer than N schedules with the next
// schedules of its seeded sample, skipping those tried here or by the --schedules-from
// collection (a failure there is not tried again), measured with the run's passes; a second run
// finds every program full and measures nothing.
TEST(Collect, AtLeastSamplesMoreSchedulesUntilEveryProgramHasEnough) {
  const auto from = fresh_dir("at_least_a"), dir = fresh_dir("at_least_b");
  collect(small_collection(from, 3));
  const auto path = from / "measurements.jsonl";
  std::vector<nlohmann::json> records = ResultLog(path.string()).records();
  ASSERT_EQ(records.size(), 4u);  // the default and 3 samples, in the order they finished
  const Program p = zoo_program("matmul_192");
  const std::vector<Schedule> sample = sample_schedules(p.info(), 12, 0);
  ASSERT_GT(sample.size(), 6u);
  const std::string failed = measurement_key(p, sample[3]);
  for (auto& r : records) {
    if (r.at("key") == failed) r["ok"] = false;  // failed on that CPU: not measured here, nor drawn
  }
  write_log(path, records);

  CollectOptions o = small_collection(dir, 3);
  o.schedules_from = from.string();
  o.at_least = 6;
  o.max_run_seconds = 0.05;
  const CollectSummary s = collect(o);
  EXPECT_GE(s.topped_up, 3);
  EXPECT_TRUE(s.short_of.empty()) << s.short_of.front();
  const auto passes = [&](size_t i) {  // of sample[i] here; 0 when not measured
    const ResultLog log((dir / "measurements.jsonl").string());
    const nlohmann::json* r = log.find(measurement_key(p, sample[i]));
    return r == nullptr ? 0 : static_cast<int>(passes_of(log, *r).size());
  };
  EXPECT_EQ(passes(3), 0);
  for (size_t i : {4, 5, 6}) EXPECT_EQ(passes(i), 1) << i;  // the next of the sample
  const Graph g = load_graph((dir / "layout/train/matmul_192.npz").string());
  EXPECT_GE(g.num_configs, 6);
  std::ifstream in(dir / "manifest.json");
  EXPECT_EQ(nlohmann::json::parse(in).at("protocol").at("at_least_per_program"), 6);
  // Resumed with two passes: the schedules topped up before get their second, none is drawn.
  o.passes = 2;
  const CollectSummary second = collect(o);
  EXPECT_EQ(second.topped_up, 0);
  for (size_t i : {0, 4, 5, 6}) {
    const ResultLog log((dir / "measurements.jsonl").string());
    EXPECT_EQ(passes(i), log.find(measurement_key(p, sample[i]))->value("ok", false) ? 2 : 1) << i;
  }
  const CollectSummary again = collect(o);
  EXPECT_EQ(again.measured + again.failed, 0);

  CollectOptions bad = o;
  bad.schedules_from.clear();
  bad.recorded = true;
  EXPECT_THROW(collect(bad), UsageError);
  bad.recorded = false;
  bad.at_least = -1;
  EXPECT_THROW(collect(bad), UsageError);
  std::filesystem::remove_all(from);
  std::filesystem::remove_all(dir);
}

// --statistic median-run: the datasets take each schedule's minimum over its passes of the
// median run, the manifest says so, a later --rewrite without the flag keeps it, and naming
// best-run brings back the best runs.
TEST(Collect, TheMedianRunStatisticIsTheManifestsAndKeptByRewrites) {
  const auto dir = fresh_dir("statistic");
  CollectOptions o = small_collection(dir, 2);
  const auto path = dir / "measurements.jsonl";
  std::vector<nlohmann::json> records = measured_records(o);
  ASSERT_EQ(records.size(), 3u);  // the default and 2 samples
  // Best runs in one order, median runs in the other; schedule 2 has a second pass whose median
  // is lower than its first's and whose best is higher.
  const std::vector<double> best = {1000, 2000, 3000}, median = {9000, 8000, 7000};
  for (size_t i = 0; i < 3; ++i) {
    records[i]["best_ns"] = best[i];
    records[i]["median_ns"] = median[i];
  }
  nlohmann::json again = records[2];
  again["key"] = repeat_key(records[2].at("key").get<std::string>(), 2);
  again["pass"] = 5;
  again["best_ns"] = 3500.0;
  again["median_ns"] = 6000.0;
  records.push_back(again);
  write_log(path, records);
  const auto runtimes = [&] {
    return load_graph((dir / "layout/train/matmul_192.npz").string()).runtime_ns;
  };
  const auto statistic = [&] {
    std::ifstream in(dir / "manifest.json");
    return nlohmann::json::parse(in).at("protocol").at("statistic").get<std::string>();
  };
  o.measure = false;  // --rewrite
  o.statistic = "median-run";
  collect(o);
  EXPECT_EQ(runtimes(), (std::vector<int64_t>{9000, 8000, 6000}));
  EXPECT_EQ(statistic(), "median run (ns)");
  EXPECT_EQ(data_statistic(o.out), RunStatistic::median_run);
  o.statistic.clear();  // the collection's own
  collect(o);
  EXPECT_EQ(runtimes(), (std::vector<int64_t>{9000, 8000, 6000}));
  EXPECT_EQ(statistic(), "median run (ns)");
  o.statistic = "best-run";
  collect(o);
  EXPECT_EQ(runtimes(), (std::vector<int64_t>{1000, 2000, 3000}));
  EXPECT_EQ(statistic(), "best run (ns)");
  o.statistic = "mean-run";
  EXPECT_THROW(collect(o), InputError);
  // A manifest naming a statistic this build does not know is refused, not read as best-run.
  {
    std::ifstream in(dir / "manifest.json");
    nlohmann::json m = nlohmann::json::parse(in);
    in.close();
    m["protocol"]["statistic"] = "trimmed mean (ns)";
    std::ofstream out(dir / "manifest.json", std::ios::trunc);
    out << m.dump();
  }
  o.statistic.clear();
  EXPECT_THROW(collect(o), InputError);
  std::filesystem::remove_all(dir);
}

// One CPU per collection: its datasets take only the runtimes measured on the CPU its manifest
// names; a schedule never measured there is left out, and the noise figures stated are those of
// the latest later run on that CPU, whatever ran after it on another.
TEST(Collect, DatasetsTakeOnlyTheDataCpusRuntimes) {
  const auto dir = fresh_dir("one_cpu");
  CollectOptions o = small_collection(dir, 2);
  const auto path = dir / "measurements.jsonl";
  std::vector<nlohmann::json> records = measured_records(o);
  ASSERT_EQ(records.size(), 3u);  // the default and 2 samples
  ASSERT_NE(records[0].value("best_ns", 0.0), records[1].value("best_ns", 0.0));
  const std::string k1 = records[1].at("key");
  const std::string k2 = records[2].at("key");
  // Schedule 1 measured again on another CPU, impossibly fast; schedule 2 only there.
  nlohmann::json fast = records[1];
  fast["key"] = repeat_key(k1, 2);
  fast["pass"] = 5;
  fast["cpu"] = "Other CPU";
  fast["best_ns"] = 1.0;
  records.push_back(fast);
  records[2]["cpu"] = "Other CPU";
  // Two later runs: s1 on the data's CPU, then s2 on the other one.
  for (const char* session : {"s1", "s2"}) {
    for (int i : {0, 1}) {
      nlohmann::json r = records[static_cast<size_t>(i)];
      r["key"] = std::string("session|") + session + "|" + r.at("key").get<std::string>();
      r["pass"] = 4;
      r["session"] = session;
      r["cpu"] = std::string(session) == "s1" ? cpu_model() : "Other CPU";
      r["best_ns"] = records[static_cast<size_t>(1 - i)].value("best_ns", 0.0);  // swapped
      records.push_back(r);
    }
  }
  write_log(path, records);
  o.measure = false;  // --rewrite
  const CollectSummary s = collect(o);
  EXPECT_EQ(s.left_out_other_cpu, 1);
  const Graph g = load_graph((dir / "layout/train/matmul_192.npz").string());
  ASSERT_EQ(g.num_configs, 2);
  EXPECT_EQ(g.runtime_ns[0], static_cast<int64_t>(records[0].value("best_ns", 0.0)));
  EXPECT_EQ(g.runtime_ns[1], static_cast<int64_t>(records[1].value("best_ns", 0.0)));
  const ResultLog log(path.string());
  EXPECT_EQ(runtime_of_passes(log, *log.find(k1), MeasuredOn{"", "Other CPU"}), 1.0);
  EXPECT_EQ(runtime_of_passes(log, *log.find(k2), MeasuredOn{"", cpu_model()}), 0.0);
  EXPECT_EQ(passes_under(log, *log.find(k1), MeasuredOn{"", cpu_model()}), 1);
  const CrossSession c = cross_session_noise(log, cpu_model());
  EXPECT_EQ(c.session, "s1");
  EXPECT_EQ(c.pairs, 2);
  EXPECT_DOUBLE_EQ(c.tau, -1.0);  // the two schedules swapped places
  EXPECT_EQ(cross_session_noise(log, cpu_model(), "s2").cpu, "Other CPU");
  EXPECT_EQ(cross_session_noise(log, "Other CPU").session, "s2");
  std::ifstream in(dir / "manifest.json");
  const auto manifest = nlohmann::json::parse(in);
  EXPECT_EQ(manifest.at("counts").at("left_out_not_on_data_cpu"), 1);
  EXPECT_EQ(manifest.at("counts").at("schedules_by_measurements_on_data_cpu").at("0"), 1);
  EXPECT_EQ(manifest.at("noise").at("cross_session").at("session"), "s1");
  EXPECT_EQ(manifest.at("noise").at("cross_session_runs").at("s2").at("same_cpu_as_data"), false);
  EXPECT_EQ(manifest.at("noise").at("cross_session_runs").at("s1").at("same_cpu_as_data"), true);
  std::filesystem::remove_all(dir);
}

// --pool-sessions: a schedule measured again in a pooled later session gets the geometric mean
// of its own runtime and the session's divided by the session's shift on the program (its median
// ratio); one the session did not measure keeps its own; a session's unsound measurement leaves
// its schedule out. The manifest keeps the list for later rewrites; "none" undoes it; a session
// not on record, or measured on another CPU, is refused. The noise figures stated are the later
// run's that covers the most programs, not the latest.
TEST(Collect, PooledSessionsJoinTheDatasetsRuntimes) {
  const auto dir = fresh_dir("pooled");
  CollectOptions o = small_collection(dir, 3);
  const auto path = dir / "measurements.jsonl";
  std::vector<nlohmann::json> records = measured_records(o);
  ASSERT_EQ(records.size(), 4u);  // the default and 3 samples
  const std::vector<double> own = {1000, 2000, 3000, 4000};
  for (size_t i = 0; i < 4; ++i) records[i]["best_ns"] = own[i];
  const auto again = [&](size_t i, const std::string& session, const std::string& cpu,
                         double best_ns) {
    nlohmann::json r = records[i];
    r["key"] = "session|" + session + "|" + records[i].at("key").get<std::string>();
    r["pass"] = 4;
    r["session"] = session;
    r["cpu"] = cpu;
    r["best_ns"] = best_ns;
    return r;
  };
  // s1 on the data's CPU, 2.2x slower on the whole (ratios 2.2, 1.5, 2.4): schedules 0-2.
  const std::vector<double> s1 = {2200, 3000, 7200};
  std::vector<nlohmann::json> later;
  for (size_t i = 0; i < 3; ++i) later.push_back(again(i, "s1", cpu_model(), s1[i]));
  later.push_back(again(0, "s2", "Other CPU", 500));         // another CPU
  nlohmann::json wrong = again(3, "s3", cpu_model(), 4000);  // s3 finds schedule 3 unsound
  wrong["ok"] = false;
  wrong["error"] = "failed: wrong output: out differs at (0, 0)";
  later.push_back(wrong);
  records.insert(records.end(), later.begin(), later.end());
  write_log(path, records);
  const auto runtimes = [&] {
    return load_graph((dir / "layout/train/matmul_192.npz").string()).runtime_ns;
  };
  const auto manifest = [&] {
    std::ifstream in(dir / "manifest.json");
    return nlohmann::json::parse(in);
  };
  o.measure = false;  // --rewrite
  EXPECT_EQ(collect(o).pooled_schedules, 0);
  EXPECT_EQ(runtimes(), (std::vector<int64_t>{1000, 2000, 3000, 4000}));
  o.pool_sessions = "s1";
  const CollectSummary pooled = collect(o);
  EXPECT_EQ(pooled.pooled_schedules, 3);
  EXPECT_EQ(pooled.pooled_sessions, std::vector<std::string>{"s1"});
  const auto mean = [](double a, double b) { return std::llround(std::sqrt(a * b)); };
  EXPECT_EQ(runtimes(),
            (std::vector<int64_t>{1000, mean(2000, 3000 / 2.2), mean(3000, 7200 / 2.2), 4000}));
  EXPECT_EQ(manifest().at("protocol").at("pooled_sessions"), nlohmann::json({"s1"}));
  EXPECT_EQ(manifest().at("counts").at("schedules_pooled_with_later_sessions"), 3);
  EXPECT_EQ(data_pooled_sessions(o.out), std::vector<std::string>{"s1"});
  // The noise figures compare the collection's own runtimes with s1's, pooled or not: s1 (one
  // program) is stated, not s3, later but with no pair.
  EXPECT_EQ(manifest().at("noise").at("cross_session").at("session"), "s1");
  EXPECT_DOUBLE_EQ(manifest().at("noise").at("cross_session_tau").get<double>(), 1.0);
  o.pool_sessions.clear();  // the collection's own: s1
  collect(o);
  EXPECT_EQ(runtimes()[1], mean(2000, 3000 / 2.2));
  o.pool_sessions = "all";  // s1 and s3, not s2 (another CPU): schedule 3 is left out
  const CollectSummary all = collect(o);
  EXPECT_EQ(all.pooled_sessions, (std::vector<std::string>{"s1", "s3"}));
  EXPECT_EQ(all.left_out_failed_check, 1);
  EXPECT_EQ(runtimes().size(), 3u);
  o.pool_sessions = "none";
  collect(o);
  EXPECT_EQ(runtimes(), (std::vector<int64_t>{1000, 2000, 3000, 4000}));
  EXPECT_EQ(manifest().at("protocol").at("pooled_sessions"), nlohmann::json::array());
  o.pool_sessions = "s1,nosuch";
  EXPECT_THROW(collect(o), InputError);
  o.pool_sessions = "s2";
  EXPECT_THROW(collect(o), InputError);
  std::filesystem::remove_all(dir);
}

// A schedule one of whose measurements found it unsound (a wrong output, a read outside an
// input, a crash), in any pass, is left out of the datasets although its other passes
// succeeded; a timeout in a pass is not a verdict on the schedule and leaves it in.
TEST(Collect, DatasetsLeaveOutASchedulesThatFailedACheckInAnyPass) {
  const auto dir = fresh_dir("failed_check");
  CollectOptions o = small_collection(dir, 3);
  collect(o);
  const auto path = dir / "measurements.jsonl";
  std::vector<nlohmann::json> records = ResultLog(path.string()).records();
  ASSERT_EQ(records.size(), 4u);  // the default and 3 samples
  const std::string default_key = measurement_key(
      zoo_program("matmul_192"), default_schedule(zoo_program("matmul_192").info()));
  std::vector<nlohmann::json> samples;
  for (const auto& r : records) {
    if (r.at("key") != default_key) samples.push_back(r);
  }
  ASSERT_EQ(samples.size(), 3u);
  const std::vector<std::string> errors = {
      "failed: reads outside its inputs: A is read over [-1, 191] in dimension 0, its buffer "
      "holds [0, 255]",
      "wrong output: output 0 value 7: 1 instead of 2", "timeout after 10.0 s"};
  std::vector<nlohmann::json> repeats;
  for (size_t i = 0; i < errors.size(); ++i) {
    nlohmann::json failed = samples[i];
    failed["key"] = repeat_key(samples[i].at("key"), 2);
    failed["pass"] = 5;
    failed["ok"] = false;
    failed["error"] = errors[i];
    repeats.push_back(failed);
    records.push_back(failed);
  }
  write_log(path, records);
  o.measure = false;  // --rewrite
  const CollectSummary s = collect(o);
  EXPECT_EQ(s.left_out_failed_check, 2);
  EXPECT_EQ(s.left_out_other_cpu, 0);
  const Graph g = load_graph((dir / "layout/train/matmul_192.npz").string());
  ASSERT_EQ(g.num_configs, 2);  // the default and the schedule whose repeat timed out
  const auto kept = static_cast<int64_t>(samples[2].value("best_ns", 0.0));
  EXPECT_TRUE(g.runtime_ns[0] == kept || g.runtime_ns[1] == kept);
  EXPECT_TRUE(failed_check(repeats[0]));
  EXPECT_TRUE(failed_check(repeats[1]));
  EXPECT_FALSE(failed_check(repeats[2]));
  EXPECT_FALSE(failed_check(samples[0]));
  std::ifstream in(dir / "manifest.json");
  const auto counts = nlohmann::json::parse(in).at("counts");
  EXPECT_EQ(counts.at("left_out_failed_check"), 2);
  EXPECT_EQ(counts.at("train").at("configs"), 2);  // what the datasets hold
  std::filesystem::remove_all(dir);
}

// A collection killed mid-way (SIGKILL) keeps every measurement it finished; the restart
// measures only the rest.
TEST(Collect, KillingACollectionLosesNoFinishedMeasurement) {
  const auto dir = fresh_dir("collect_kill");
  std::filesystem::create_directories(dir);
  CollectOptions o = small_collection(dir, 12);
  const std::string log_path = (dir / "measurements.jsonl").string();
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    try {
      collect(o);
    } catch (...) {
    }
    _exit(0);
  }
  // Kill once at least 4 measurements are on disk.
  for (int i = 0; i < 600; ++i) {
    std::ifstream in(log_path);
    const auto lines = std::count(std::istreambuf_iterator<char>(in), {}, '\n');
    if (lines >= 4) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  const size_t kept = ResultLog(log_path).records().size();
  ASSERT_GE(kept, 4u);
  ASSERT_LT(kept, 13u) << "the collection finished before it was killed";
  const CollectSummary rest = collect(o);
  EXPECT_EQ(rest.skipped, static_cast<int64_t>(kept));
  EXPECT_EQ(rest.measured + rest.failed + rest.skipped, 13);
  EXPECT_EQ(ResultLog(log_path).records().size(), 13u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tcost::halide
