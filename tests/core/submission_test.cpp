#include "core/submission.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "core/tpugraphs_io.h"
#include "test_util.h"

namespace tcost {
namespace {

std::vector<int64_t> order_by_runtime(const Graph& g, bool reverse) {
  std::vector<int64_t> idx(static_cast<size_t>(g.num_configs));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    return reverse ? g.target(a) > g.target(b) : g.target(a) < g.target(b);
  });
  return idx;
}

TEST(Submission, PerfectAndReversedRankings) {
  testing::ScratchDir dir;
  const Graph g = testing::tiny_layout_graph(6);
  save_graph(dir / "tiny.npz", g);
  write_submission(dir / "p.csv", {{"layout:xla:default:tiny", order_by_runtime(g, false)}});
  ScoreReport r = score_submission({dir / "tiny.npz"}, read_submission(dir / "p.csv"), "p.csv");
  ASSERT_EQ(r.per_graph.size(), 1u);
  EXPECT_DOUBLE_EQ(r.mean_kendall_tau, 1.0);
  EXPECT_DOUBLE_EQ(r.mean_opa, 1.0);
  EXPECT_DOUBLE_EQ(r.per_graph[0].slowdown_1, 0.0);  // rankings get the first pick's cost too
  write_submission(dir / "p.csv", {{"tiny", order_by_runtime(g, true)}});
  r = score_submission({dir / "tiny.npz"}, read_submission(dir / "p.csv"), "p.csv");
  EXPECT_DOUBLE_EQ(r.mean_kendall_tau, -1.0);
  const std::vector<double> t = g.targets();
  EXPECT_DOUBLE_EQ(
      r.per_graph[0].slowdown_1,
      *std::max_element(t.begin(), t.end()) / *std::min_element(t.begin(), t.end()) - 1.0);
  EXPECT_EQ(r.tile_graphs, 0);  // the mean slowdowns stay over tile graphs
}

TEST(Submission, TileSlowdownUsesListedConfigsOnly) {
  testing::ScratchDir dir;
  Graph g = testing::tiny_layout_graph(6);
  g.collection = Collection::kTile;
  g.config_node_ids.clear();
  g.config_feat_width = 24;
  g.config_feat.assign(6 * 24, 0.0f);
  for (int i = 0; i < 6; ++i) g.config_feat[i * 24] = static_cast<float>(i);
  g.runtime_ns = {60, 10, 50, 20, 40, 30};
  g.normalizer_ns.assign(6, 60);
  save_graph(dir / "t.npz", g);
  write_submission(dir / "p.csv", {{"t", {0, 2}}});
  const ScoreReport r = score_submission({dir / "t.npz"}, read_submission(dir / "p.csv"), "p.csv");
  EXPECT_DOUBLE_EQ(r.mean_slowdown_1, 5.0);  // 60 / 10 - 1
  EXPECT_DOUBLE_EQ(r.mean_slowdown_5, 4.0);  // min(60, 50) / 10 - 1: only two listed
  EXPECT_EQ(r.tile_graphs, 1);
}

TEST(Submission, BadRowsAreInputErrors) {
  testing::ScratchDir dir;
  save_graph(dir / "tiny.npz", testing::tiny_layout_graph(3));
  auto expect_bad = [&](const std::string& text, const std::string& part) {
    testing::write_bytes(dir / "p.csv", std::vector<uint8_t>(text.begin(), text.end()));
    try {
      score_submission({dir / "tiny.npz"}, read_submission(dir / "p.csv"), "p.csv");
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_bad("id,configs\ntiny,0;1;2\n", "header");
  expect_bad("ID,TopConfigs\ntiny,0;x;2\n", "'x'");
  expect_bad("ID,TopConfigs\ntiny,0;1;7\n", "out of range");
  expect_bad("ID,TopConfigs\ntiny,0;1;1\n", "twice");
  expect_bad("ID,TopConfigs\nother,0;1;2\n", "matches no");
  expect_bad("ID,TopConfigs\n", "no row");
  expect_bad("ID,TopConfigs\ntiny,0;1;2\ntiny,0;1;2\n", "appears twice");
}

}  // namespace
}  // namespace tcost
