#include "core/synth.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/metrics.h"
#include "core/tpugraphs_io.h"
#include "test_util.h"

namespace tcost {
namespace {

TEST(Synth, DeterministicAndValid) {
  SynthOptions o;
  o.configs = 50;
  const Graph a = make_synth_graph(o, 3), b = make_synth_graph(o, 3), c = make_synth_graph(o, 4);
  EXPECT_EQ(a.runtime_ns, b.runtime_ns);
  EXPECT_EQ(a.config_feat, b.config_feat);
  EXPECT_NE(a.runtime_ns, c.runtime_ns);
  testing::ScratchDir dir;
  save_graph(dir / "a.npz", a);
  const Graph r = load_graph(dir / "a.npz");  // passes every validation
  EXPECT_EQ(r.runtime_ns, a.runtime_ns);
}

// The runtime is a nontrivial function of the configuration: departing from default layouts
// (which match across edges) costs time, so the count of non-default layouts correlates with
// runtime, but far from perfectly (shapes and interactions matter).
TEST(Synth, LayoutRuntimeDependsOnConfigs) {
  SynthOptions o;
  o.configs = 300;
  o.noise_sigma = 0.0;
  double tau_sum = 0;
  const int graphs = 6;
  for (int i = 0; i < graphs; ++i) {
    const Graph g = make_synth_graph(o, i);
    std::vector<double> scrambled(static_cast<size_t>(g.num_configs)), rt = g.targets();
    for (int64_t c = 0; c < g.num_configs; ++c) {
      const float* f = g.config(c);
      const float* d = g.config(0);  // config 0 is all default layouts
      for (int64_t k = 0; k < g.config_stride(); ++k) scrambled[c] += f[k] != d[k];
    }
    tau_sum += kendall_tau_b(scrambled, rt);
  }
  const double tau = tau_sum / graphs;
  EXPECT_GT(tau, 0.2);
  EXPECT_LT(tau, 0.95);
}

TEST(Synth, NoiseIsMultiplicative) {
  SynthOptions quiet, noisy;
  quiet.noise_sigma = 0.0;
  noisy.noise_sigma = 0.05;
  const Graph a = make_synth_graph(quiet, 1), b = make_synth_graph(noisy, 1);
  ASSERT_EQ(a.config_feat, b.config_feat);  // noise draws do not disturb the configs
  double max_ratio = 0;
  for (int64_t c = 0; c < a.num_configs; ++c) {
    max_ratio = std::max(
        max_ratio, std::abs(std::log(static_cast<double>(b.runtime_ns[c]) / a.runtime_ns[c])));
  }
  EXPECT_GT(max_ratio, 0.01);
  EXPECT_LT(max_ratio, 0.5);
}

TEST(Synth, TileGraphsHaveNormalizers) {
  SynthOptions o;
  o.collection = Collection::kTile;
  o.configs = 40;
  const Graph g = make_synth_graph(o, 0);
  EXPECT_EQ(g.collection, Collection::kTile);
  EXPECT_EQ(g.config_feat_width, 24);
  EXPECT_EQ(static_cast<int64_t>(g.normalizer_ns.size()), g.num_configs);
  std::vector<double> t = g.targets();
  EXPECT_GT(*std::max_element(t.begin(), t.end()), *std::min_element(t.begin(), t.end()) * 1.5);
}

}  // namespace
}  // namespace tcost
