#include "core/dataset.h"

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/synth.h"
#include "test_util.h"

namespace tcost {
namespace {

TEST(Dataset, ListsSplitsAndLoadsLazily) {
  testing::ScratchDir dir;
  SynthOptions o;
  o.graphs = 10;
  o.configs = 30;
  o.min_nodes = 10;
  o.max_nodes = 20;
  const SynthSummary s = write_synth_dataset(dir.path().string(), o);
  EXPECT_EQ(s.train + s.valid + s.test, 10);
  EXPECT_GE(s.test, 1);
  DatasetOptions opts;
  opts.max_configs_per_graph = 8;
  opts.seed = 3;
  const Dataset ds(dir.path().string(), opts);
  EXPECT_EQ(static_cast<int>(ds.files(Split::kTrain).size()), s.train);
  EXPECT_EQ(static_cast<int>(ds.files(Split::kTest).size()), s.test);
  int seen = 0;
  ds.for_each(Split::kTrain, [&](const Graph& g) {
    EXPECT_EQ(g.num_configs, 8);
    ++seen;
  });
  EXPECT_EQ(seen, s.train);
  // Same seed, same sample.
  const Graph a = ds.load(ds.files(Split::kTrain)[0]);
  const Graph b = ds.load(ds.files(Split::kTrain)[0]);
  EXPECT_EQ(a.runtime_ns, b.runtime_ns);
}

TEST(Dataset, MergesDuplicatesOnRequest) {
  testing::ScratchDir dir;
  Graph g = testing::tiny_layout_graph(4);
  std::copy_n(g.config(0), g.config_stride(), g.config_feat.begin() + 2 * g.config_stride());
  std::filesystem::create_directories(dir.path() / "train");
  save_graph(dir / "train/g.npz", g);
  DatasetOptions opts;
  opts.merge_duplicates = true;
  const Dataset ds(dir.path().string(), opts);
  int64_t merged = -1;
  EXPECT_EQ(ds.load(ds.files(Split::kTrain)[0], &merged).num_configs, 3);
  EXPECT_EQ(merged, 1);
}

TEST(Dataset, BadRootsAreInputErrors) {
  testing::ScratchDir dir;
  EXPECT_THROW(Dataset(dir / "nope"), InputError);
  EXPECT_THROW(Dataset(dir.path().string()), InputError);  // no splits
  EXPECT_THROW(parse_split("training"), UsageError);
}

}  // namespace
}  // namespace tcost
