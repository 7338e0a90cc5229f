// Files written by numpy are read exactly; files written by tcost are read by numpy exactly.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/tpugraphs_io.h"
#include "test_util.h"

namespace tcost {
namespace {

using testing::ScratchDir;

void expect_common(const Graph& g) {
  ASSERT_EQ(g.num_nodes, 5);
  ASSERT_EQ(g.node_feat_width, 140);
  for (int64_t i = 0; i < 5 * 140; ++i)
    EXPECT_FLOAT_EQ(g.node_feat[i], static_cast<float>(i % 11) * 0.25f) << i;
  EXPECT_EQ(g.node_opcode, (std::vector<int32_t>{63, 63, 34, 2, 97}));
  EXPECT_EQ(g.edges, (std::vector<int32_t>{2, 0, 2, 1, 3, 2, 4, 3}));
  EXPECT_EQ(g.runtime_ns, (std::vector<int64_t>{5000, 4000, 7000, 4500}));
}

class NumpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(testing::run_python("write_tpugraphs.py", dir_.path().string()), 0)
        << "python3 with numpy is required (scripts/install-deps.sh installs python3-numpy)";
  }
  ScratchDir dir_;
};

TEST_F(NumpyFiles, LayoutSavez) {
  const Graph g = load_graph(dir_ / "layout_savez.npz");
  EXPECT_EQ(g.collection, Collection::kLayout);
  EXPECT_EQ(g.name, "layout_savez");
  expect_common(g);
  EXPECT_EQ(g.config_node_ids, (std::vector<int32_t>{2, 4}));
  EXPECT_EQ(g.num_configs, 4);
  EXPECT_EQ(g.config_feat_width, 18);
  EXPECT_EQ(g.node_splits, (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(g.config(1)[0], 1);
  EXPECT_EQ(g.config(1)[1], 0);
  EXPECT_EQ(g.config(1)[2], -1);
}

TEST_F(NumpyFiles, LayoutCompressedZeroPaddedFortranOtherDtypes) {
  Graph g = load_graph(dir_ / "layout_compressed_zero_pad.npz");
  EXPECT_EQ(g.collection, Collection::kLayout);
  expect_common(g);
  EXPECT_EQ(g.config(1)[2], 0);
  EXPECT_TRUE(canonicalize_layout_padding(g));
  EXPECT_EQ(g.config(1)[2], -1);
  EXPECT_EQ(g.config(1)[0], 1);
  EXPECT_EQ(g.config(1)[1], 0);
  const Graph ref = load_graph(dir_ / "layout_savez.npz");
  // Same as the -1 padded file, except the documented ambiguity: an all-padding group reads as
  // a rank-1 layout [0].
  ASSERT_EQ(g.config_feat.size(), ref.config_feat.size());
  for (size_t k = 0; k < g.config_feat.size(); k += 6) {
    const bool empty =
        std::all_of(&ref.config_feat[k], &ref.config_feat[k] + 6, [](float v) { return v == -1; });
    for (size_t j = 0; j < 6; ++j) {
      EXPECT_EQ(g.config_feat[k + j], empty ? (j == 0 ? 0.0f : -1.0f) : ref.config_feat[k + j])
          << k + j;
    }
  }
}

TEST_F(NumpyFiles, Tile) {
  for (const char* name : {"tile_savez.npz", "tile_compressed.npz"}) {
    const Graph g = load_graph(dir_ / name);
    EXPECT_EQ(g.collection, Collection::kTile);
    expect_common(g);
    EXPECT_EQ(g.config_feat_width, 24);
    EXPECT_EQ(g.normalizer_ns, std::vector<int64_t>(4, 5000));
    for (int64_t i = 0; i < 4 * 24; ++i) EXPECT_EQ(g.config_feat[i], static_cast<float>(i % 9));
    EXPECT_DOUBLE_EQ(g.target(1), 0.8);
  }
}

TEST(NumpyReadsTcost, StoredAndCompressedRoundTrip) {
  ScratchDir dir;
  const Graph g = testing::tiny_layout_graph(6);
  for (bool compress : {false, true}) {
    const std::string ours = dir / (compress ? "c.npz" : "s.npz");
    const std::string back = dir / (compress ? "c_back.npz" : "s_back.npz");
    save_graph(ours, g, compress);
    ASSERT_EQ(testing::run_python("check_tcost_written.py", ours + " " + back + " 6"), 0);
    const Graph r = load_graph(back);
    EXPECT_EQ(r.node_feat, g.node_feat);
    EXPECT_EQ(r.node_opcode, g.node_opcode);
    EXPECT_EQ(r.edges, g.edges);
    EXPECT_EQ(r.config_node_ids, g.config_node_ids);
    EXPECT_EQ(r.config_feat, g.config_feat);
    EXPECT_EQ(r.runtime_ns, g.runtime_ns);
  }
}

}  // namespace
}  // namespace tcost
