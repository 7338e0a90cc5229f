#include "core/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace tcost {
namespace {

TEST(Metrics, KnownValues) {
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(kendall_tau_b({4, 3, 2, 1}, {10, 20, 30, 40}), -1.0);
  // 4 concordant, 0 discordant, one tie on each side of 6 pairs: 4 / sqrt(5 * 5)
  EXPECT_NEAR(kendall_tau_b({1, 2, 2, 3}, {1, 3, 2, 3}), 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(ordered_pair_accuracy({1, 2, 3}, {3, 2, 1}), 0.0);
  EXPECT_DOUBLE_EQ(ordered_pair_accuracy({1, 1, 1}, {3, 2, 1}), 0.5);
}

TEST(Metrics, DegenerateSizes) {
  EXPECT_TRUE(std::isnan(kendall_tau_b({}, {})));
  EXPECT_TRUE(std::isnan(kendall_tau_b({1}, {5})));
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2}, {5, 6}), 1.0);
  EXPECT_DOUBLE_EQ(kendall_tau_b({1, 2}, {6, 5}), -1.0);
  EXPECT_TRUE(std::isnan(kendall_tau_b({1, 1}, {6, 5})));
  EXPECT_TRUE(std::isnan(kendall_tau_b({1, 2}, {5, 5})));
  EXPECT_TRUE(std::isnan(ordered_pair_accuracy({1, 2}, {5, 5})));
  EXPECT_DOUBLE_EQ(ordered_pair_accuracy({1, 1}, {5, 6}), 0.5);
}

TEST(Metrics, FastMatchesBruteForceWithTies) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 60);
    const int levels = 1 + static_cast<int>(rng() % 8);  // few levels: many ties
    std::vector<double> p(n), t(n);
    for (int i = 0; i < n; ++i) {
      p[i] = static_cast<double>(rng() % levels);
      t[i] = trial % 3 == 0 ? p[i] + static_cast<double>(rng() % 2)
                            : static_cast<double>(rng() % (levels + 3));
    }
    const double fast = kendall_tau_b(p, t), brute = kendall_tau_b_brute(p, t);
    if (std::isnan(brute)) {
      EXPECT_TRUE(std::isnan(fast)) << trial;
    } else {
      EXPECT_NEAR(fast, brute, 1e-12) << trial;
    }
    const double fo = ordered_pair_accuracy(p, t), bo = ordered_pair_accuracy_brute(p, t);
    if (std::isnan(bo)) {
      EXPECT_TRUE(std::isnan(fo)) << trial;
    } else {
      EXPECT_NEAR(fo, bo, 1e-12) << trial;
    }
  }
}

TEST(Metrics, SlowdownAtK) {
  const std::vector<double> truth = {5, 1, 4, 2, 3};
  EXPECT_DOUBLE_EQ(slowdown_at_k({0, 1, 2, 3, 4}, truth, 1), 4.0);  // picks 5 vs best 1
  EXPECT_DOUBLE_EQ(slowdown_at_k({0, 1, 2, 3, 4}, truth, 2), 0.0);  // 1 is in the top 2
  EXPECT_DOUBLE_EQ(slowdown_at_k({9, 8, 0, 1, 7}, truth, 2), 1.0);  // {4, 2} -> 2/1 - 1
  EXPECT_DOUBLE_EQ(slowdown_at_k({9, 8, 0, 1, 7}, truth, 100), 0.0);
}

TEST(Metrics, MeanIgnoresNaN) {
  EXPECT_DOUBLE_EQ(mean_ignoring_nan({1.0, std::nan(""), 0.0}), 0.5);
  EXPECT_TRUE(std::isnan(mean_ignoring_nan({})));
}

}  // namespace
}  // namespace tcost
