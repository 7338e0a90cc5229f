#include "core/prune.h"

#include <gtest/gtest.h>

#include "test_util.h"

namespace tcost {
namespace {

// tiny graph: 0,1 params; 2 = f(0,1); 3 = f(2); 4 = f(3); configurable: 2 and 4.
TEST(Prune, NeighbourhoodGrowsWithHops) {
  Graph g = testing::tiny_layout_graph(2);
  g.config_node_ids = {2};
  g.config_feat.resize(2 * 18);
  EXPECT_EQ(config_neighbourhood(g, 0), (std::vector<int32_t>{2}));
  EXPECT_EQ(config_neighbourhood(g, 1), (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(config_neighbourhood(g, 2), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(Prune, InducedSubgraphRemapsEdgesAndConfigColumns) {
  const Graph g = testing::tiny_layout_graph(3);
  const Graph s = induced_subgraph(g, {4, 3, 0});
  EXPECT_EQ(s.num_nodes, 3);
  EXPECT_EQ(s.node_opcode, (std::vector<int32_t>{63, 2, 97}));
  EXPECT_EQ(s.edges, (std::vector<int32_t>{2, 1}));         // 4 consumes 3
  EXPECT_EQ(s.config_node_ids, (std::vector<int32_t>{2}));  // node 4 kept, node 2 dropped
  ASSERT_EQ(s.config_feat.size(), 3u * 18);
  for (int c = 0; c < 3; ++c) {
    for (int k = 0; k < 18; ++k) EXPECT_EQ(s.config(c)[k], g.config(c)[18 + k]);
  }
  EXPECT_EQ(std::vector<float>(s.node_feat.begin(), s.node_feat.begin() + 140),
            std::vector<float>(g.node_feat.begin(), g.node_feat.begin() + 140));
}

}  // namespace
}  // namespace tcost
