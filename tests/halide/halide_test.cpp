// The measurement protocol: a hang is cut by the timeout, a crash or an error is recorded, and
// schedules that differ hugely are measured in the right order.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "halide/measure.h"
#include "halide/pipelines.h"

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

}  // namespace
}  // namespace tcost::halide
