#include "core/synth.h"
#include "core/synth_ast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/metrics.h"
#include "core/opcodes.h"
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

// Every generator writes valid, deterministic graphs of its own op mix and cost model; the
// standard one is the generator as it was (the default options give the same graphs); the
// defaults it suits apply only where no option was given.
TEST(Synth, GeneratorsDifferAndStandardIsUnchanged) {
  const auto names = synth_generator_names();
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names.front(), "standard");
  SynthOptions base;
  base.configs = 30;
  base.noise_sigma = 0.0;
  const Graph plain = make_synth_graph(base, 2);
  testing::ScratchDir dir;
  for (const auto& name : names) {
    for (Collection c : {Collection::kLayout, Collection::kTile}) {
      SynthOptions o = base;
      o.collection = c;
      o.generator = name;
      const Graph a = make_synth_graph(o, 2), b = make_synth_graph(o, 2);
      EXPECT_EQ(a.runtime_ns, b.runtime_ns) << name;
      save_graph(dir / (name + ".npz"), a);
      EXPECT_NO_THROW(load_graph(dir / (name + ".npz"))) << name;
      std::vector<double> t = a.targets();
      EXPECT_GT(*std::max_element(t.begin(), t.end()), *std::min_element(t.begin(), t.end()))
          << name << ": configurations must matter";
      if (c == Collection::kLayout && name == "standard") {
        EXPECT_EQ(a.runtime_ns, plain.runtime_ns);
        EXPECT_EQ(a.node_opcode, plain.node_opcode);
      }
    }
  }
  // Other op mixes: over several graphs, the fraction of matmul-like ops differs.
  auto matmul_fraction = [&](const std::string& name) {
    SynthOptions o = base;
    o.generator = name;
    double matmul = 0, all = 0;
    for (int i = 0; i < 8; ++i) {
      const Graph g = make_synth_graph(o, i);
      for (int32_t op : g.node_opcode) {
        matmul += op == op::kDot || op == op::kConvolution;
        all += op != op::kParameter;
      }
    }
    return matmul / all;
  };
  EXPECT_GT(matmul_fraction("compute"), 2 * matmul_fraction("standard"));
  EXPECT_LT(matmul_fraction("fusion"), matmul_fraction("standard"));
  SynthOptions bad = base;
  bad.generator = "nope";
  EXPECT_THROW(make_synth_graph(bad, 0), UsageError);
  SynthOptions d;
  d.generator = "movement";
  apply_generator_defaults(d, false, false);
  EXPECT_DOUBLE_EQ(d.noise_sigma, 0.10);
  d.generator = "fusion";
  d.noise_sigma = 0.3;
  d.min_nodes = d.max_nodes = 10;
  apply_generator_defaults(d, true, true);
  EXPECT_DOUBLE_EQ(d.noise_sigma, 0.3);
  EXPECT_EQ(d.max_nodes, 10);
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

TEST(SynthAst, TreesRoundTripAndRuntimesDependOnTheSchedule) {
  SynthOptions o;
  o.configs = 60;
  const AstSet a = make_synth_ast(o, 0), b = make_synth_ast(o, 0);
  EXPECT_EQ(a.runtime_ns, b.runtime_ns);
  ASSERT_EQ(a.num_configs, 60);
  ASSERT_EQ(static_cast<int64_t>(a.node_offsets.size()), 61);
  testing::ScratchDir dir;
  save_ast(dir / "a.npz", a);
  EXPECT_TRUE(is_ast_file(dir / "a.npz"));
  const AstSet r = load_ast(dir / "a.npz");
  EXPECT_EQ(r.kinds, a.kinds);
  EXPECT_EQ(r.feats, a.feats);
  EXPECT_EQ(r.edges, a.edges);
  EXPECT_EQ(r.runtime_ns, a.runtime_ns);
  EXPECT_EQ(r.lowering, 0);  // synthetic trees name no lowering
  // The version of the lowering that made the trees travels with them.
  AstSet versioned = a;
  versioned.lowering = 7;
  save_ast(dir / "v.npz", versioned);
  EXPECT_EQ(load_ast(dir / "v.npz").lowering, 7);
  EXPECT_EQ(select_ast_configs(versioned, {1}).lowering, 7);
  // Every tree is a tree: one root, n - 1 edges, parents before use.
  for (int64_t c = 0; c < a.num_configs; ++c) {
    EXPECT_EQ(a.edge_offsets[c + 1] - a.edge_offsets[c],
              a.node_offsets[c + 1] - a.node_offsets[c] - 1);
    EXPECT_EQ(a.kinds[a.node_offsets[c]], kAstRoot);
  }
  // Vectorised schedules beat unvectorised ones with the same tiles on average: the runtime
  // responds to the configuration.
  const auto lo = *std::min_element(a.runtime_ns.begin(), a.runtime_ns.end());
  const auto hi = *std::max_element(a.runtime_ns.begin(), a.runtime_ns.end());
  EXPECT_GT(hi, 3 * lo);
  const AstSet sub = select_ast_configs(a, {5, 2});
  EXPECT_EQ(sub.runtime_ns, (std::vector<int64_t>{a.runtime_ns[5], a.runtime_ns[2]}));
  EXPECT_EQ(sub.node_offsets[1], a.node_offsets[6] - a.node_offsets[5]);
}

TEST(SynthAst, MalformedOffsetsAreInputErrors) {
  SynthOptions o;
  o.configs = 3;
  AstSet a = make_synth_ast(o, 1);
  testing::ScratchDir dir;
  a.node_offsets[1] = a.node_offsets[2] + 1;  // decreasing
  save_ast(dir / "bad.npz", a);
  EXPECT_THROW(load_ast(dir / "bad.npz"), InputError);
  a = make_synth_ast(o, 1);
  a.edges[0] = 10000;  // beyond its tree
  save_ast(dir / "bad2.npz", a);
  EXPECT_THROW(load_ast(dir / "bad2.npz"), InputError);
}

}  // namespace
}  // namespace tcost
