// Corpus-driven robustness: truncated, bit-flipped and semantically wrong files must give an
// InputError naming the problem, never a crash, a hang or another exception.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "core/tpugraphs_io.h"
#include "test_util.h"

namespace tcost {
namespace {

using testing::ScratchDir;

// Loads a file; returns "" when it loads, the error text for an InputError. Anything else fails.
std::string try_load(const std::string& path) {
  try {
    load_graph(path);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

TEST(Malformed, TruncationsAtEveryOffset) {
  ScratchDir dir;
  for (bool compress : {false, true}) {
    save_graph(dir / "ok.npz", testing::tiny_layout_graph(3), compress);
    const auto bytes = testing::read_bytes(dir / "ok.npz");
    ASSERT_EQ(try_load(dir / "ok.npz"), "");
    for (size_t len = 0; len < bytes.size(); ++len) {
      testing::write_bytes(
          dir / "cut.npz",
          std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<int64_t>(len)));
      EXPECT_NE(try_load(dir / "cut.npz"), "") << "truncated to " << len << " bytes loaded";
    }
  }
}

TEST(Malformed, RandomByteCorruption) {
  ScratchDir dir;
  std::mt19937_64 rng(7);
  int rejected = 0, total = 0;
  for (bool compress : {false, true}) {
    save_graph(dir / "ok.npz", testing::tiny_layout_graph(3), compress);
    const auto bytes = testing::read_bytes(dir / "ok.npz");
    for (int trial = 0; trial < 1500; ++trial) {
      auto b = bytes;
      const int flips = 1 + static_cast<int>(rng() % 6);
      for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<uint8_t>(rng());
      testing::write_bytes(dir / "bad.npz", b);
      rejected += try_load(dir / "bad.npz") != "";  // must not crash or throw anything else
      ++total;
    }
  }
  // Most corruptions hit checked bytes (CRC, sizes, headers); a few hit unchecked ones (dates).
  EXPECT_GT(rejected, total * 8 / 10);
}

// Writes the tiny layout graph's arrays with one key replaced (or removed, when array is null).
std::string with_key(const ScratchDir& dir, const std::string& key, const NpyArray* array) {
  const Graph g = testing::tiny_layout_graph(3);
  std::vector<std::pair<std::string, NpyArray>> a = {
      {"node_feat", NpyArray::of<float>({5, 140}, g.node_feat)},
      {"node_opcode", NpyArray::of<int32_t>({5}, g.node_opcode)},
      {"edge_index", NpyArray::of<int32_t>({4, 2}, g.edges)},
      {"node_config_ids", NpyArray::of<int32_t>({2}, g.config_node_ids)},
      {"node_config_feat", NpyArray::of<float>({3, 2, 18}, g.config_feat)},
      {"config_runtime", NpyArray::of<int64_t>({3}, g.runtime_ns)},
  };
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (it->first == key) {
      if (array == nullptr) {
        a.erase(it);
      } else {
        it->second = *array;
      }
      break;
    }
  }
  if (array != nullptr &&
      std::none_of(a.begin(), a.end(), [&](auto& p) { return p.first == key; })) {
    a.emplace_back(key, *array);
  }
  const std::string path = dir / (key + ".npz");
  write_npz(path, a, false);
  return path;
}

void expect_error(const std::string& path, const std::vector<std::string>& parts) {
  const std::string e = try_load(path);
  ASSERT_NE(e, "") << path << " loaded";
  for (const auto& p : parts)
    EXPECT_NE(e.find(p), std::string::npos) << "'" << p << "' not in: " << e;
}

TEST(Malformed, SemanticErrorsNameKeyExpectedAndFound) {
  ScratchDir dir;
  expect_error(with_key(dir, "config_runtime", nullptr), {"config_runtime", "missing"});
  expect_error(with_key(dir, "node_config_feat", nullptr), {"node_config_feat"});
  const auto float_edges = NpyArray::of<float>({4, 2}, {2, 0, 2, 1, 3, 2, 4, 3});
  expect_error(with_key(dir, "edge_index", &float_edges), {"edge_index", "integer", "<f4"});
  const auto bad_edge = NpyArray::of<int32_t>({1, 2}, {2, 5});
  expect_error(with_key(dir, "edge_index", &bad_edge), {"edge_index", "[0, 5)", "5"});
  const auto edge_rank = NpyArray::of<int32_t>({2, 4}, {2, 0, 2, 1, 3, 2, 4, 3});
  expect_error(with_key(dir, "edge_index", &edge_rank), {"edge_index", "(m, 2)", "(2, 4)"});
  const auto dup_ids = NpyArray::of<int32_t>({2}, {4, 4});
  expect_error(with_key(dir, "node_config_ids", &dup_ids), {"node_config_ids", "distinct", "4"});
  const auto far_ids = NpyArray::of<int32_t>({2}, {1, 9});
  expect_error(with_key(dir, "node_config_ids", &far_ids), {"node_config_ids", "9"});
  const auto neg_rt = NpyArray::of<int64_t>({3}, {5, -1, 7});
  expect_error(with_key(dir, "config_runtime", &neg_rt), {"config_runtime", "positive", "-1"});
  const auto nan_rt = NpyArray::of<double>({3}, {5, std::nan(""), 7});
  expect_error(with_key(dir, "config_runtime", &nan_rt), {"config_runtime", "finite"});
  const auto short_rt = NpyArray::of<int64_t>({2}, {5, 7});
  expect_error(with_key(dir, "config_runtime", &short_rt), {"node_config_feat", "dimension 0 = 2"});
  std::vector<float> feat(5 * 140, 0.0f);
  feat[17] = std::numeric_limits<float>::infinity();
  const auto inf_feat = NpyArray::of<float>({5, 140}, feat);
  expect_error(with_key(dir, "node_feat", &inf_feat), {"node_feat", "finite", "index 17"});
  const auto big_op = NpyArray::of<int32_t>({5}, {63, 63, 200, 2, 97});
  expect_error(with_key(dir, "node_opcode", &big_op), {"node_opcode", "[0, 120]", "200"});
  const auto short_op = NpyArray::of<int32_t>({4}, {63, 63, 2, 97});
  expect_error(with_key(dir, "node_opcode", &short_op), {"node_opcode", "(4,)"});
  const auto tile_key = NpyArray::of<float>({3, 24}, std::vector<float>(72, 1.0f));
  expect_error(with_key(dir, "config_feat", &tile_key), {"both layout keys"});
}

TEST(Malformed, ErrorsNameTheFile) {
  ScratchDir dir;
  testing::write_bytes(dir / "junk.npz", std::vector<uint8_t>(1000, 0x50));
  expect_error(dir / "junk.npz", {"junk.npz", "zip"});
  expect_error(dir / "absent.npz", {"absent.npz", "cannot open"});
}

}  // namespace
}  // namespace tcost
