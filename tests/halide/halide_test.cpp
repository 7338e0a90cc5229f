// The measurement protocol: a hang is cut by the timeout, a crash or an error is recorded, and
// schedules that differ hugely are measured in the right order.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "core/tpugraphs_io.h"
#include "halide/collect.h"
#include "halide/measure.h"
#include "halide/pipelines.h"
#include "halide/result_log.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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

TEST(HalideMatmul, ParallelVectorisedBeatsSerialScalar) {
  MeasureOptions o;
  o.timeout_s = 60;
  const MeasureResult serial = measure_isolated([] { return build_matmul(256, {}, 2); }, o);
  const MeasureResult fast = measure_isolated(
      [] {
        return build_matmul(256, {32, 8, true}, 2);
      },
      o);
  ASSERT_TRUE(serial.ok) << serial.error;
  ASSERT_TRUE(fast.ok) << fast.error;
  EXPECT_GT(serial.compile_ms, 0.0);
  EXPECT_LT(fast.best_ns * 2, serial.best_ns)
      << "fast " << fast.best_ns << " serial " << serial.best_ns;
}

TEST(HalideConv, EveryScheduleKindRunsAndParallelVectorisedTilesAreFaster) {
  MeasureOptions o;
  o.timeout_s = 60;
  const MeasureResult serial = measure_isolated([] { return build_conv3x3(32, 16, 16, {}, 2); }, o);
  const MeasureResult fast = measure_isolated(
      [] {
        return build_conv3x3(32, 16, 16, {16, 8, true}, 2);
      },
      o);
  const MeasureResult root = measure_isolated(
      [] {
        return build_conv3x3(32, 16, 16, {0, 8, true}, 2);
      },
      o);
  ASSERT_TRUE(serial.ok) << serial.error;
  ASSERT_TRUE(fast.ok) << fast.error;
  ASSERT_TRUE(root.ok) << root.error;
  EXPECT_LT(fast.best_ns * 2, serial.best_ns)
      << "fast " << fast.best_ns << " serial " << serial.best_ns;
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() /
          (std::string("tcost_halide_") + name + "_" + std::to_string(getpid()) + ".jsonl"))
      .string();
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

// tcost collect on one small program: every schedule measured once, a tile graph in the
// TpuGraphs schema written, and a second run measures nothing again.
TEST(Collect, MeasuresWritesAndResumes) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tcost_collect_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  CollectOptions o;
  o.out = dir.string();
  o.pipelines = "matmul_128";
  o.configs_per_graph = 4;
  const CollectSummary first = collect(o);
  EXPECT_EQ(first.measured + first.failed, 5);  // the default schedule and 4 samples
  EXPECT_EQ(first.graphs_written, 1);
  const Graph g = load_graph((dir / "tile/train/matmul_128.npz").string());
  EXPECT_EQ(g.collection, Collection::kTile);
  EXPECT_EQ(g.num_configs, first.measured);
  EXPECT_EQ(g.config_feat_width, 24);
  EXPECT_DOUBLE_EQ(g.target(0), static_cast<double>(g.runtime_ns[0]) / g.normalizer_ns[0]);
  const CollectSummary again = collect(o);
  EXPECT_EQ(again.measured, 0);
  EXPECT_EQ(again.skipped, 5);
  // A second pass over half the schedules gives the tau between two measurements; it does not
  // add configurations to the dataset.
  o.remeasure = 0.5;
  const CollectSummary noise = collect(o);
  EXPECT_GE(noise.remeasured_pairs, 2);
  EXPECT_GE(noise.remeasure_tau, -1.0);
  EXPECT_LE(noise.remeasure_tau, 1.0);
  EXPECT_EQ(load_graph((dir / "tile/train/matmul_128.npz").string()).num_configs, g.num_configs);
  o.remeasure = 0;
  o.pipelines = "nothing*";
  EXPECT_THROW(collect(o), UsageError);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tcost::halide
