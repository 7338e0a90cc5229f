#include "core/graph.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tcost {
namespace {

TEST(Graph, SelectAndSubsampleKeepRowsTogether) {
  const Graph g = testing::tiny_layout_graph(10);
  const Graph s = select_configs(g, {7, 2});
  ASSERT_EQ(s.num_configs, 2);
  EXPECT_EQ(s.runtime_ns[0], g.runtime_ns[7]);
  EXPECT_TRUE(std::equal(s.config(1), s.config(1) + g.config_stride(), g.config(2)));
  const Graph a = subsample_configs(g, 4, 9), b = subsample_configs(g, 4, 9);
  EXPECT_EQ(a.num_configs, 4);
  EXPECT_EQ(a.runtime_ns, b.runtime_ns);  // seeded
  EXPECT_EQ(subsample_configs(g, 100, 9).num_configs, 10);
}

TEST(Graph, MergeDuplicatesKeepsMinimumRuntime) {
  Graph g = testing::tiny_layout_graph(5);
  // Make config 3 a copy of config 1 with a lower runtime, config 4 a copy of 1 with a higher one.
  const int64_t s = g.config_stride();
  std::copy_n(g.config(1), s, g.config_feat.begin() + 3 * s);
  std::copy_n(g.config(1), s, g.config_feat.begin() + 4 * s);
  g.runtime_ns = {100, 50, 70, 20, 90};
  EXPECT_EQ(count_duplicate_configs(g), 2);
  EXPECT_EQ(merge_duplicate_configs(g), 2);
  ASSERT_EQ(g.num_configs, 3);
  EXPECT_EQ(g.runtime_ns, (std::vector<int64_t>{100, 20, 70}));
  EXPECT_EQ(count_duplicate_configs(g), 0);
}

TEST(Graph, ZeroPaddedLayoutsBecomeMinusOnePadded) {
  Graph g = testing::tiny_layout_graph(1);
  std::fill(g.config_feat.begin(), g.config_feat.end(), 0.0f);
  // Group 0: rank-2 layout [1, 0]; group 1: rank-3 [2, 0, 1]; the rest all-zero (rank 1 or none).
  g.config_feat[0] = 1;
  g.config_feat[6] = 2;
  g.config_feat[8] = 1;
  EXPECT_TRUE(canonicalize_layout_padding(g));
  EXPECT_EQ(std::vector<float>(g.config_feat.begin(), g.config_feat.begin() + 12),
            (std::vector<float>{1, 0, -1, -1, -1, -1, 2, 0, 1, -1, -1, -1}));
  EXPECT_EQ(g.config_feat[12], 0);
  EXPECT_EQ(g.config_feat[13], -1);
  EXPECT_FALSE(canonicalize_layout_padding(g));  // already -1 padded: unchanged
}

}  // namespace
}  // namespace tcost
