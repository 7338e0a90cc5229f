// Tests of the model and training layers (one translation unit: LibTorch headers are slow).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/blas.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/synth.h"
#include "core/synth_ast.h"
#include "core/tpugraphs_io.h"
#include "model/handcrafted.h"
#include "model/models.h"
#include "train/api.h"
#include "train/checkpoint.h"
#include "train/cost_model.h"
#include "train/losses.h"
#include "train/step.h"

namespace tcost {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "") {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string name = info != nullptr ? info->name() : tag;
    path_ = fs::temp_directory_path() / ("tcost_model_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& s) const { return (path_ / s).string(); }
  std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

Graph small_graph(Collection c, int configs = 40, int index = 0) {
  SynthOptions o;
  o.collection = c;
  o.configs = configs;
  o.min_nodes = 20;
  o.max_nodes = 40;
  return make_synth_graph(o, index);
}

TEST(Losses, PreferTheTrueOrder) {
  torch::manual_seed(0);
  const auto target = torch::tensor({1.0, 2.0, 3.0, 4.0}, torch::kFloat64);
  const auto good = torch::tensor({0.0f, 1.0f, 2.0f, 3.0f});
  const auto bad = torch::tensor({3.0f, 2.0f, 1.0f, 0.0f});
  EXPECT_LT(train::listmle_loss(good, target).item<double>(),
            train::listmle_loss(bad, target).item<double>());
  EXPECT_DOUBLE_EQ(train::hinge_loss(good * 2, target, 1.0).item<double>(), 0.0);  // all gaps >= 1
  EXPECT_GT(train::hinge_loss(bad, target, 1.0).item<double>(), 1.0);
  EXPECT_LT(
      train::mse_loss(torch::log(target).to(torch::kFloat32), target, 0.0, 1.0).item<double>(),
      1e-10);
  // The gradient of a ranking loss pushes the faster config's cost down.
  auto cost = torch::tensor({0.5f, 0.0f}, torch::requires_grad());
  train::listmle_loss(cost, torch::tensor({1.0, 2.0}, torch::kFloat64)).backward();
  EXPECT_GT(cost.grad()[0].item<float>(), 0.0f);
  EXPECT_LT(cost.grad()[1].item<float>(), 0.0f);
}

TEST(Losses, WeightedHingesCountBigGapsAndTheTopMost) {
  const auto target = torch::tensor({1.0, 1.01, 4.0}, torch::kFloat64);
  // Swapping the two near-equal configurations costs hinge as much as swapping a big gap ...
  const auto swap_close = torch::tensor({0.0f, -2.0f, 2.0f});  // 1 and 1.01 reversed
  const auto swap_far = torch::tensor({0.0f, 2.0f, -2.0f});    // 1.01 and 4 reversed
  const double plain_close = train::hinge_loss(swap_close, target, 1.0).item<double>();
  const double plain_far = train::hinge_loss(swap_far, target, 1.0).item<double>();
  EXPECT_NEAR(plain_close, 1.0, 1e-6);      // one pair of three at 3 (margin 1 + gap 2)
  EXPECT_NEAR(plain_far, 8.0 / 3.0, 1e-6);  // two pairs, at 3 and 5
  // ... hinge-gap hardly counts the pair inside the noise, and counts the big gap fully.
  const double gap_close = train::hinge_gap_loss(swap_close, target, 1.0).item<double>();
  const double gap_far = train::hinge_gap_loss(swap_far, target, 1.0).item<double>();
  EXPECT_LT(gap_close, 0.05 * plain_close);
  EXPECT_GT(gap_far, plain_far);
  // hinge-top weighs a swap at the top (ranks 0 and 1) above one lower down (ranks 1 and 2)
  // with the same runtime gaps.
  const auto even = torch::tensor({1.0, 2.0, 4.0}, torch::kFloat64);
  const auto swap_top = torch::tensor({1.0f, 0.0f, 2.0f});
  const auto swap_low = torch::tensor({0.0f, 2.0f, 1.0f});
  EXPECT_NEAR(train::hinge_loss(swap_top, even, 1.0).item<double>(),
              train::hinge_loss(swap_low, even, 1.0).item<double>(), 1e-6);
  EXPECT_GT(train::hinge_top_loss(swap_top, even, 1.0).item<double>(),
            train::hinge_top_loss(swap_low, even, 1.0).item<double>());
  // Both are zero when every pair is ordered with the margin.
  const auto good = torch::tensor({0.0f, 2.0f, 4.0f});
  EXPECT_DOUBLE_EQ(train::hinge_gap_loss(good, target, 1.0).item<double>(), 0.0);
  EXPECT_DOUBLE_EQ(train::hinge_top_loss(good, even, 1.0).item<double>(), 0.0);
}

// hinge-log asks each ordered pair to be parted by its own log runtime gap: costs spaced like
// log runtimes cost nothing, a pair inside the noise needs hardly any room, and a pair too
// close for its gap costs the shortfall.
TEST(Losses, HingeLogPartsEachPairByItsLogGap) {
  const auto target = torch::tensor({1.0, 1.01, 4.0}, torch::kFloat64);
  const auto logs = torch::log(target).to(torch::kFloat32);
  EXPECT_NEAR(train::hinge_log_loss(logs, target, 1.0).item<double>(), 0.0, 1e-6);
  // Ordered, with the near-equal pair 0.001 apart: only the pairs with the big gap fall short.
  const auto close = torch::tensor({0.0f, 0.001f, 1.0f});
  const double gap = std::log(4.0), small = std::log(1.01);
  const double expected = ((small - 0.001) + (gap - 1.0) + (gap - small - 0.999)) / 3.0;
  EXPECT_NEAR(train::hinge_log_loss(close, target, 1.0).item<double>(), expected, 1e-5);
  // Reversing the near-equal pair costs about its (small) gap plus the reversal; the plain
  // hinge would charge the whole margin of 1.
  const auto swap_close = torch::tensor({0.01f, 0.0f, 2.0f});
  const double swap = train::hinge_log_loss(swap_close, target, 1.0).item<double>();
  EXPECT_NEAR(swap, (small + 0.01) / 3.0, 1e-5);
  EXPECT_LT(swap, train::hinge_loss(swap_close, target, 1.0).item<double>());
  // The margin scales the gaps; the gradient pushes the faster config's cost down.
  EXPECT_GT(train::hinge_log_loss(close, target, 2.0).item<double>(),
            train::hinge_log_loss(close, target, 1.0).item<double>());
  auto cost = torch::tensor({0.5f, 0.0f}, torch::requires_grad());
  train::hinge_log_loss(cost, torch::tensor({1.0, 2.0}, torch::kFloat64), 1.0).backward();
  EXPECT_GT(cost.grad()[0].item<float>(), 0.0f);
  EXPECT_LT(cost.grad()[1].item<float>(), 0.0f);
}

// ListNet's top-one loss is about the fastest: a swap at the top costs more than the same swap
// lower down, a configuration inside the noise of the fastest shares its weight, and the
// gradient pushes the fastest configuration's cost down.
TEST(Losses, ListNetIsAboutTheFastest) {
  const auto even = torch::tensor({1.0, 2.0, 4.0}, torch::kFloat64);
  const auto right = torch::tensor({-4.0f, 0.0f, 4.0f});
  const auto swap_top = torch::tensor({0.0f, -4.0f, 4.0f});
  const auto swap_low = torch::tensor({-4.0f, 4.0f, 0.0f});
  const double r = train::listnet_loss(right, even).item<double>();
  EXPECT_LT(r, 0.05);
  EXPECT_GT(train::listnet_loss(swap_top, even).item<double>(), 50 * r);
  EXPECT_LT(train::listnet_loss(swap_low, even).item<double>(), 2 * r);
  // Two configurations 1% apart share the target weight: ranking either first costs about the
  // same, next to ranking the 4x slower one first.
  const auto close = torch::tensor({1.0, 1.01, 4.0}, torch::kFloat64);
  const double a = train::listnet_loss(torch::tensor({-4.0f, 0.0f, 4.0f}), close).item<double>();
  const double b = train::listnet_loss(torch::tensor({0.0f, -4.0f, 4.0f}), close).item<double>();
  const double far = train::listnet_loss(torch::tensor({4.0f, 0.0f, -4.0f}), close).item<double>();
  EXPECT_LT(std::abs(a - b), 0.1 * (far - a));
  auto cost = torch::tensor({0.0f, 0.0f, 0.0f}, torch::requires_grad());
  train::listnet_loss(cost, even).backward();
  EXPECT_GT(cost.grad()[0].item<float>(), 0.0f);  // descending lowers the fastest's cost
  EXPECT_LT(cost.grad()[2].item<float>(), 0.0f);
  EXPECT_EQ(train::resolve_loss("listnet", "ast-gcn"), "listnet");
}

// One list names the losses: each name resolves to itself, each but auto is a loss that
// batch_loss computes (finite, differentiable), and a name off the list is refused by both.
TEST(Losses, EveryListedNameIsALoss) {
  model::PreparedGraph batch;
  batch.targets = torch::tensor({1.0, 2.0, 4.0}, torch::kFloat64);
  model::Normalizer norm;
  norm.log_target_mean = std::log(2.0);
  train::StepOptions o;
  for (const auto& name : train::loss_names()) {
    EXPECT_EQ(train::resolve_loss(name, "ast-gcn"), name == "auto" ? "hinge-log" : name);
    if (name == "auto") continue;
    o.loss = name;
    auto cost = torch::tensor({0.5f, 0.0f, -0.5f}, torch::requires_grad());
    const auto loss = train::batch_loss(cost, batch, norm, o);
    EXPECT_TRUE(std::isfinite(loss.item<double>())) << name;
    loss.backward();
    EXPECT_GT(cost.grad().abs().sum().item<float>(), 0.0f) << name;
  }
  EXPECT_EQ(train::loss_names().back(), "auto");
  o.loss = "l2";
  EXPECT_THROW(train::batch_loss(torch::zeros({3}), batch, norm, o), UsageError);
  EXPECT_THROW(train::resolve_loss("l2", "ast-gcn"), UsageError);
}

// Options left to the model: its loss, its epochs (the syntax-tree models train longer) and its
// peak learning rate (the syntax-tree GCN's is higher).
TEST(Defaults, LossEpochsLearningRateAndWorkPoolPerModel) {
  EXPECT_EQ(train::TrainOptions().loss, "auto");
  EXPECT_EQ(train::resolve_loss("auto", "tgraph"), "hinge");
  EXPECT_EQ(train::resolve_loss("auto", "ast-gcn"), "hinge-log");
  EXPECT_EQ(train::resolve_loss("auto", "tgraph-ast"), "hinge-log");
  EXPECT_EQ(train::resolve_loss("auto", "sage"), "listmle");
  EXPECT_THROW(train::resolve_loss("l2", "tgraph"), UsageError);
  EXPECT_EQ(train::TrainOptions().epochs, 0);
  for (const char* m : {"ast-gcn", "tgraph-ast"}) EXPECT_EQ(train::resolve_epochs(0, m), 80) << m;
  for (const char* m : {"tgraph", "sage", "gcn-baseline", "xgb"})
    EXPECT_EQ(train::resolve_epochs(0, m), 40) << m;
  EXPECT_EQ(train::resolve_epochs(7, "ast-gcn"), 7);
  EXPECT_EQ(train::TrainOptions().lr, 0.0);
  for (const char* m : {"ast-gcn", "tgraph-ast"}) EXPECT_EQ(train::resolve_lr(0, m), 2e-3) << m;
  for (const char* m : {"tgraph", "sage", "gcn-baseline"})
    EXPECT_EQ(train::resolve_lr(0, m), 1e-3) << m;
  EXPECT_EQ(train::resolve_lr(5e-4, "ast-gcn"), 5e-4);
  EXPECT_EQ(train::TrainOptions().work_pool, -1);
  for (const char* m : {"ast-gcn", "tgraph-ast"}) EXPECT_TRUE(train::resolve_work_pool(-1, m)) << m;
  for (const char* m : {"tgraph", "sage", "gcn-baseline", "xgb"})
    EXPECT_FALSE(train::resolve_work_pool(-1, m)) << m;
  EXPECT_FALSE(train::resolve_work_pool(0, "tgraph-ast"));
  EXPECT_FALSE(train::resolve_work_pool(0, "ast-gcn"));
  EXPECT_TRUE(train::resolve_work_pool(1, "ast-gcn"));
  EXPECT_EQ(train::TrainOptions().tree_passes, -1);
  for (const char* m : {"ast-gcn", "tgraph-ast"})
    EXPECT_TRUE(train::resolve_tree_passes(-1, m)) << m;
  for (const char* m : {"tgraph", "sage", "gcn-baseline", "xgb"})
    EXPECT_FALSE(train::resolve_tree_passes(-1, m)) << m;
  EXPECT_FALSE(train::resolve_tree_passes(0, "ast-gcn"));
  EXPECT_TRUE(train::resolve_tree_passes(1, "tgraph-ast"));
}

TEST(Models, EveryModelScoresLayoutAndTileGraphs) {
  torch::manual_seed(0);
  for (Collection c : {Collection::kLayout, Collection::kTile}) {
    const Graph g = small_graph(c);
    const auto norm = model::Normalizer::fit(std::vector<Graph>{g});
    for (const auto& name : model::model_names()) {
      model::ModelOptions o;
      o.name = name;
      auto m = model::make_model(o, {c, g.node_feat_width, g.config_feat_width}, norm);
      const auto p = model::prepare_graph(g, norm, m->prune_hops());
      const auto cost = m->forward(p.input, p.configs.narrow(0, 0, 7));
      ASSERT_EQ(cost.sizes(), (std::vector<int64_t>{7})) << name;
      EXPECT_TRUE(torch::isfinite(cost).all().item<bool>()) << name;
      EXPECT_GT(cost.std().item<float>(), 0.0f) << name << ": configs must matter";
      EXPECT_GT(m->flops_per_config(p.input), 0.0) << name;
    }
  }
  model::ModelOptions bad;
  bad.name = "nope";
  const Graph g = small_graph(Collection::kLayout);
  EXPECT_THROW(model::make_model(bad, {}, model::Normalizer::fit(std::vector<Graph>{g})),
               UsageError);
}

// Without cross-configuration attention a configuration's cost does not depend on which other
// configurations share its forward pass, so chunked evaluation equals whole evaluation.
TEST(Models, ChunkingDoesNotChangeScoresWithoutAttention) {
  torch::manual_seed(0);
  torch::NoGradGuard no_grad;
  const Graph g = small_graph(Collection::kLayout);
  const auto norm = model::Normalizer::fit(std::vector<Graph>{g});
  model::ModelOptions o;
  o.name = "tgraph";
  o.cross_attention = false;
  auto m = model::make_model(o, {g.collection, g.node_feat_width, g.config_feat_width}, norm);
  m->eval();
  const auto p = model::prepare_graph(g, norm, m->prune_hops());
  const auto whole = m->forward(p.input, p.configs);
  const auto part = m->forward(p.input, p.configs.narrow(0, 5, 3));
  EXPECT_TRUE(torch::allclose(whole.narrow(0, 5, 3), part, 1e-4, 1e-5));
}

// forward (node-major, sparse propagation, folded embeddings) and score (the same under
// inference mode, in place) compute the scores of the reference formulation, and forward's
// gradients are the reference's: for every model and collection, with and without edges.
TEST(Models, ForwardAndScoreEqualTheReferenceFormulation) {
  torch::manual_seed(0);
  for (Collection c : {Collection::kLayout, Collection::kTile}) {
    const Graph g = small_graph(c, 24);
    const auto norm = model::Normalizer::fit(std::vector<Graph>{g});
    std::vector<model::ModelOptions> options;
    for (const auto& name : model::model_names()) {
      options.emplace_back();
      options.back().name = name;
    }
    options.push_back(options.back());
    options.back().cross_attention = false;
    options.push_back(options.back());
    options.back().cross_attention = true;
    options.back().config_pool = true;  // the configuration-aware readout
    for (const auto& o : options) {
      auto m = model::make_model(o, {c, g.node_feat_width, g.config_feat_width}, norm);
      // Weights away from their initial values, biases and norms included.
      for (auto& t : m->parameters()) {
        torch::NoGradGuard no_grad;
        t.add_(torch::randn_like(t) * 0.1);
      }
      auto p = model::prepare_graph(g, norm, m->prune_hops());
      for (bool edges : {true, false}) {
        const std::string what = o.name + (o.config_pool ? " config-pool " : " ") +
                                 collection_name(c) + (edges ? " with edges" : " without edges");
        if (!edges) {
          p.input.src = p.input.dst = torch::zeros({0}, torch::kInt64);
          p.input.gcn_norm = torch::zeros({0, 1});
          p.input.inv_deg = p.input.self_norm = torch::ones({p.input.num_nodes, 1});
        }
        m->train();
        const auto targets = torch::rand({p.num_configs()}, torch::kFloat64);
        auto gradients = [&](const torch::Tensor& cost) {
          m->zero_grad();
          train::hinge_loss(cost, targets, 1.0).backward();
          std::vector<torch::Tensor> out;
          for (const auto& t : m->parameters())
            out.push_back(t.grad().defined() ? t.grad().clone() : torch::zeros_like(t));
          return out;
        };
        const auto expected = m->reference_forward(p.input, p.configs);
        const auto got = m->forward(p.input, p.configs);
        ASSERT_EQ(got.sizes(), expected.sizes()) << what;
        EXPECT_TRUE(torch::allclose(got, expected, 1e-4, 1e-5))
            << what << ": max difference " << (got - expected).abs().max().item<float>();
        EXPECT_GT(expected.std().item<float>(), 0.0f) << what;
        const auto g_expected = gradients(expected), g_got = gradients(got);
        for (size_t i = 0; i < g_got.size(); ++i) {
          EXPECT_TRUE(torch::allclose(g_got[i], g_expected[i], 1e-3, 1e-5))
              << what << ": gradient of parameter " << i << " differs by "
              << (g_got[i] - g_expected[i]).abs().max().item<float>();
        }
        m->eval();
        torch::Tensor reference;
        {
          torch::NoGradGuard no_grad;
          reference = m->reference_forward(p.input, p.configs);
        }
        const auto scored = m->score(p.input, p.configs);
        EXPECT_TRUE(torch::allclose(scored, reference, 1e-4, 1e-5))
            << what << ": score differs by " << (scored - reference).abs().max().item<float>();
      }
    }
  }
}

TEST(Features, PruningKeepsConfigNodesAndTheirNeighbours) {
  const Graph g = small_graph(Collection::kLayout);
  const auto norm = model::Normalizer::fit(std::vector<Graph>{g});
  const auto full = model::prepare_graph(g, norm, -1);
  const auto pruned = model::prepare_graph(g, norm, 0);
  EXPECT_EQ(full.input.num_nodes, g.num_nodes);
  EXPECT_EQ(pruned.input.num_nodes, g.num_config_nodes());
  EXPECT_EQ(full.configs.sizes(), pruned.configs.sizes());
  EXPECT_EQ(full.input.src.numel(), 2 * g.num_edges());
}

TEST(Features, NormalizerRejectsMixedCollections) {
  EXPECT_THROW(model::Normalizer::fit(std::vector<Graph>{small_graph(Collection::kLayout),
                                                         small_graph(Collection::kTile)}),
               InputError);
  const auto norm = model::Normalizer::fit(std::vector<Graph>{small_graph(Collection::kLayout)});
  EXPECT_THROW(model::prepare_graph(small_graph(Collection::kTile), norm, -1), InputError);
}

TEST(Handcrafted, WidthAndRows) {
  for (Collection c : {Collection::kLayout, Collection::kTile}) {
    const Graph g = small_graph(c, 12);
    const auto f = model::handcrafted_features(g);
    ASSERT_EQ(f.size(), static_cast<size_t>(12 * model::handcrafted_width(c)));
    for (float v : f) ASSERT_TRUE(std::isfinite(v));
  }
}

// The syntax trees' hand-crafted features (the xgb model on trees): two configurations of one
// loop of 8 around a 4-byte store, serial then parallel. The parallel count, launches, tasks,
// the share of store work under a parallel loop and the work per task are as counted by hand,
// and the second half of each row is its difference from configuration 0.
TEST(Handcrafted, SyntaxTreeFeaturesCountWhatTheTreeDoes) {
  AstSet s;
  s.name = "two-loops";
  s.num_configs = 2;
  const float ext8 = std::log2(9.0f), once = 1.0f;
  for (const int32_t loop : {kAstForSerial, kAstForParallel}) {
    s.kinds.insert(s.kinds.end(), {kAstRoot, loop, kAstStore});
    std::vector<float> root(kAstFeatureWidth, 0.0f), l(kAstFeatureWidth, 0.0f),
        st(kAstFeatureWidth, 0.0f);
    root[kAstLogTrips] = once;
    root[kAstChildren] = 1;
    l[kAstLogExtent] = ext8;
    l[kAstDepth] = 1;
    l[kAstLogTrips] = once;
    l[kAstInnermost] = 1;
    l[kAstChildren] = 1;
    st[kAstDepth] = 2;
    st[kAstLogTrips] = ext8;
    st[kAstBytes] = 4;
    st[kAstUnitStride] = 1;
    st[kAstLogStride] = 1;
    st[kAstLanes] = 1;
    st[kAstTypeBits] = 32;
    for (const auto* row : {&root, &l, &st})
      s.feats.insert(s.feats.end(), row->begin(), row->end());
    s.edges.insert(s.edges.end(), {0, 1, 1, 2});
  }
  s.node_offsets = {0, 3, 6};
  s.edge_offsets = {0, 2, 4};
  s.runtime_ns = {800, 200};
  const int w = model::handcrafted_tree_width();
  const auto f = model::handcrafted_tree_features(s);
  ASSERT_EQ(f.size(), static_cast<size_t>(2 * w));
  for (float v : f) ASSERT_TRUE(std::isfinite(v));
  const int half = w / 2;
  const float* serial = f.data();
  const float* parallel = f.data() + w;
  // Positions: size (2), per-kind count and executions (32), loads and stores (20),
  // arithmetic (4), then the parallel block.
  const int p = 2 + 2 * kAstNumKinds + 20 + 4;
  EXPECT_EQ(serial[p], 0.0f);
  EXPECT_EQ(parallel[p], 1.0f);                       // one parallel loop
  EXPECT_FLOAT_EQ(parallel[p + 1], 1.0f);             // launched once: log2(1 + 1)
  EXPECT_FLOAT_EQ(parallel[p + 2], std::log2(9.0f));  // 8 tasks
  EXPECT_FLOAT_EQ(parallel[p + 4], 1.0f);             // all the store work is under it
  EXPECT_EQ(serial[p + 4], 0.0f);
  EXPECT_FLOAT_EQ(parallel[p + 6], 1.0f);  // one store per task: log2(1 + 8 / 8)
  // The stores: 8 executions of 4 bytes, contiguous (log2(1 + 32) in the contiguous class).
  const int stores = 2 + 2 * kAstNumKinds + 10;
  EXPECT_FLOAT_EQ(serial[stores], std::log2(33.0f));
  EXPECT_FLOAT_EQ(serial[stores + 2], std::log2(33.0f));
  for (int k = 0; k < half; ++k) {
    EXPECT_EQ(serial[half + k], 0.0f) << k;
    EXPECT_FLOAT_EQ(parallel[half + k], parallel[k] - serial[k]) << k;
  }
  // Trees of an older, narrower lowering are refused, not read past their rows.
  AstSet narrow = s;
  narrow.node_feat_width = 8;
  narrow.feats.clear();
  for (size_t v = 0; v < s.kinds.size(); ++v)
    narrow.feats.insert(narrow.feats.end(), s.feats.begin() + v * kAstFeatureWidth,
                        s.feats.begin() + v * kAstFeatureWidth + 8);
  EXPECT_THROW(model::handcrafted_tree_features(narrow), InputError);
}

// A small synthetic dataset written once for the training tests.
// Training options for the tests: one thread, no output.
train::TrainOptions quick_options(const std::string& data, const std::string& model,
                                  const std::string& out, int epochs) {
  train::TrainOptions t;
  t.data = data;
  t.model = model;
  t.out = out;
  t.epochs = epochs;
  t.threads = 1;
  t.quiet = true;
  return t;
}

// A checkpoint's scores on the test split of `data`, on one thread.
ScoreReport evaluate_on(const std::string& model, const std::string& data) {
  train::EvalOptions e;
  e.model = model;
  e.data = data;
  e.threads = 1;
  return train::evaluate_model(e);
}

class Training : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("training_data");
    SynthOptions o;
    o.graphs = 12;
    o.configs = 40;
    o.min_nodes = 20;
    o.max_nodes = 40;
    write_synth_dataset(dir_->str(), o);
  }
  static void TearDownTestSuite() { delete dir_; }
  static train::TrainOptions options(const std::string& model, const std::string& out) {
    return quick_options(dir_->str(), model, out, 4);
  }
  static TempDir* dir_;
};
TempDir* Training::dir_ = nullptr;

TEST_F(Training, EveryModelLearnsAndRoundTripsThroughItsCheckpoint) {
  TempDir out;
  for (const std::string name : {"gcn-baseline", "sage", "tgraph", "xgb"}) {
    auto t = options(name, out / (name + ".pt"));
    train::train_model(t);
    const ScoreReport r = evaluate_on(t.out, dir_->str());
    EXPECT_GT(r.mean_kendall_tau, 0.3) << name;  // untrained models score about 0
    // Predictions from the saved file are reproducible.
    const std::string g = fs::directory_iterator(fs::path(dir_->str()) / "test")->path().string();
    EXPECT_EQ(train::predict_costs(t.out, g), train::predict_costs(t.out, g)) << name;
    // One JSON line per epoch (or per 10 XGBoost rounds) in the log.
    std::ifstream log(t.out + ".log.jsonl");
    std::string line;
    int lines = 0;
    while (std::getline(log, line)) ++lines;
    EXPECT_GE(lines, 2) << name;
  }
}

TEST_F(Training, ResumeContinuesWhereItStopped) {
  TempDir out;
  auto straight = options("sage", out / "straight.pt");
  train::train_model(straight);
  auto first = options("sage", out / "resumed.pt");
  first.stop_after = 2;  // as if interrupted after epoch 2
  train::train_model(first);
  auto rest = first;
  rest.stop_after = 0;
  rest.resume = true;
  train::train_model(rest);
  const std::string g = fs::directory_iterator(fs::path(dir_->str()) / "valid")->path().string();
  const auto a = train::predict_costs(out / "straight.pt.resume", g);
  const auto b = train::predict_costs(out / "resumed.pt.resume", g);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-4 * (1 + std::abs(a[i])));
}

// --include-valid trains on train/ and valid/ together, validates nothing and keeps the last epoch:
// the same run as training on one train/ holding both (in the same order), and not the run that
// validates on valid/.
TEST_F(Training, IncludeValidTrainsOnTheValidationGraphsToo) {
  TempDir out;
  const fs::path split = out / "split", joined = out / "joined";
  // Prefixes keep the joined train/ in the order --include-valid reads: train/, then valid/.
  for (const auto& [dir, prefix] :
       {std::pair{"train", "a_"}, std::pair{"valid", "b_"}, std::pair{"test", "t_"}}) {
    const std::string to_joined = std::string(dir) == "test" ? "test" : "train";
    fs::create_directories(split / dir);
    fs::create_directories(joined / to_joined);
    for (const auto& e : fs::directory_iterator(fs::path(dir_->str()) / dir)) {
      const std::string name = prefix + e.path().filename().string();
      fs::copy_file(e.path(), split / dir / name);
      fs::copy_file(e.path(), joined / to_joined / name);
    }
  }
  auto merged = quick_options(split.string(), "sage", out / "merged.pt", 3);
  merged.include_valid = true;
  train::train_model(merged);
  const train::Checkpoint ck = train::load_checkpoint(merged.out);
  EXPECT_EQ(ck.meta.epoch, 3);  // the last epoch, whatever its loss
  EXPECT_EQ(ck.meta.best_valid_tau, -2);
  std::ifstream log(merged.out + ".log.jsonl");
  std::string line;
  int lines = 0;
  while (std::getline(log, line)) {
    ++lines;
    EXPECT_FALSE(nlohmann::json::parse(line).contains("valid_metric")) << line;
  }
  EXPECT_EQ(lines, 3);
  auto together = quick_options(joined.string(), "sage", out / "together.pt", 3);
  train::train_model(together);
  auto validated = quick_options(split.string(), "sage", out / "validated.pt", 3);
  train::train_model(validated);
  const std::string g = fs::directory_iterator(split / "test")->path().string();
  const auto a = train::predict_costs(merged.out, g);
  EXPECT_EQ(a, train::predict_costs(together.out, g));
  EXPECT_NE(a, train::predict_costs(validated.out, g));
  auto xgb = quick_options(split.string(), "xgb", out / "x.pt", 3);
  xgb.include_valid = true;
  EXPECT_THROW(train::train_model(xgb), UsageError);
}

// --average-last N keeps the mean of the weights at the ends of the last N epochs (runs without
// validation only); a run stopped inside that window and resumed ends with the same mean.
TEST_F(Training, AverageLastKeepsTheMeanOfTheLastEpochsWeights) {
  TempDir out;
  auto straight = options("sage", out / "straight.pt");
  straight.include_valid = true;
  straight.average_last = 2;
  train::train_model(straight);
  // The same run one epoch at a time; the resume file holds each epoch's own weights.
  auto step = straight;
  step.out = out / "steps.pt";
  step.stop_after = 1;
  std::vector<train::Checkpoint> epoch_weights;
  for (int epoch = 1; epoch <= 4; ++epoch) {
    step.resume = epoch > 1;
    train::train_model(step);
    epoch_weights.push_back(train::load_checkpoint(step.out + ".resume"));
  }
  const train::Checkpoint mean = train::load_checkpoint(step.out);
  EXPECT_EQ(mean.meta.epoch, 4);
  EXPECT_EQ(mean.meta.averaged_epochs, 2);
  const auto third = epoch_weights[2].model->named_parameters();
  const auto fourth = epoch_weights[3].model->named_parameters();
  int compared = 0;
  for (const auto& p : mean.model->named_parameters()) {
    const torch::Tensor expected = (third[p.key()] + fourth[p.key()]) / 2;
    EXPECT_TRUE(torch::allclose(p.value(), expected, 1e-5, 1e-6)) << p.key();
    EXPECT_FALSE(torch::equal(p.value(), fourth[p.key()])) << p.key();
    ++compared;
  }
  EXPECT_GT(compared, 0);
  const std::string g = fs::directory_iterator(fs::path(dir_->str()) / "test")->path().string();
  EXPECT_EQ(train::predict_costs(straight.out, g), train::predict_costs(step.out, g));
  EXPECT_EQ(train::load_checkpoint(straight.out).meta.averaged_epochs, 2);
  // The averaged epochs train at one learning rate, the one reached when they start.
  std::ifstream log(straight.out + ".log.jsonl");
  std::vector<double> rates;
  for (std::string line; std::getline(log, line);)
    rates.push_back(nlohmann::json::parse(line).at("lr").get<double>());
  ASSERT_EQ(rates.size(), 4u);
  // (each line: the rate of the step after its epoch; epoch 3's first step is the held one)
  EXPECT_GT(rates[0], rates[1]);
  EXPECT_EQ(rates[1], rates[2]);
  EXPECT_EQ(rates[2], rates[3]);
  EXPECT_GT(rates[3], 0);
  // With validation the best epoch is kept, so there is nothing to average; nor past the run.
  auto validated = options("sage", out / "validated.pt");
  validated.average_last = 2;
  EXPECT_THROW(train::train_model(validated), UsageError);
  EXPECT_FALSE(fs::exists(validated.out + ".log.jsonl"));  // refused before writing anything
  auto too_many = straight;
  too_many.average_last = 5;
  EXPECT_THROW(train::train_model(too_many), UsageError);
}

// --init starts a model from another checkpoint's weights (pretraining, then fine-tuning): with
// a learning rate of nearly zero (0 asks for the model's default) the fine-tuned model is the
// pretrained one; the model kind must match.
TEST_F(Training, InitStartsFromAnotherCheckpointsWeights) {
  TempDir out;
  auto pre = options("tgraph", out / "pre.pt");
  train::train_model(pre);
  auto tune = options("tgraph", out / "tuned.pt");
  tune.init = pre.out;
  tune.lr = 1e-30;
  tune.epochs = 1;
  train::train_model(tune);
  const std::string g = fs::directory_iterator(fs::path(dir_->str()) / "valid")->path().string();
  EXPECT_EQ(train::predict_costs(tune.out, g), train::predict_costs(pre.out, g));
  auto fresh = tune;
  fresh.init.clear();
  fresh.out = out / "fresh.pt";
  train::train_model(fresh);
  EXPECT_NE(train::predict_costs(fresh.out, g), train::predict_costs(pre.out, g));
  auto sage = options("sage", out / "sage.pt");
  sage.epochs = 1;
  train::train_model(sage);
  tune.init = sage.out;
  EXPECT_THROW(train::train_model(tune), UsageError);
  auto xgb = options("xgb", out / "x.pt");
  xgb.init = pre.out;
  EXPECT_THROW(train::train_model(xgb), UsageError);
}

// The in-memory cost model: loaded once, it scores graphs as the files' predictions do,
// refits on new measurements (its ranking of them improves) and saves what it learned.
TEST_F(Training, InMemoryCostModelScoresRefitsAndSaves) {
  TempDir out;
  EXPECT_EQ(train::model_names(), (std::vector<std::string>{"gcn-baseline", "sage", "tgraph",
                                                            "tgraph-ast", "ast-gcn", "xgb"}));
  SynthOptions so;
  so.configs = 60;
  so.min_nodes = 20;
  so.max_nodes = 40;
  so.seed = 77;  // a graph no model has seen
  const Graph fresh = make_synth_graph(so, 0);
  const auto truth = fresh.targets();
  for (const std::string name : {"tgraph", "xgb"}) {
    SCOPED_TRACE(name);
    auto t = options(name, out / (name + ".pt"));
    t.epochs = 1;
    train::train_model(t);
    const auto m = train::load_cost_model(t.out, 1);
    EXPECT_EQ(m->name(), name);
    EXPECT_EQ(m->collection(), Collection::kLayout);
    const std::string g = fs::directory_iterator(fs::path(dir_->str()) / "test")->path().string();
    EXPECT_EQ(m->score(load_graph(g)), train::predict_costs(t.out, g));
    const double before = kendall_tau_b(m->score(fresh), truth);
    train::RefitOptions r;
    r.steps = 60;
    r.lr = 1e-3;
    m->refit({train::Views{&fresh}}, r);
    const auto refitted = m->score(fresh);
    const double after = kendall_tau_b(refitted, truth);
    EXPECT_GT(after, before + 0.05) << before << " -> " << after;
    m->save(out / (name + ".refit.pt"));
    const auto reloaded = train::load_cost_model(out / (name + ".refit.pt"), 1)->score(fresh);
    ASSERT_EQ(reloaded.size(), refitted.size());
    for (size_t i = 0; i < reloaded.size(); ++i)
      EXPECT_NEAR(reloaded[i], refitted[i], 1e-5 * (1 + std::abs(refitted[i])));
    // A graph of another collection is refused with a clear error.
    EXPECT_THROW(m->score(small_graph(Collection::kTile)), InputError);
  }
}

// Refit in memory on the syntax trees of a program it has not seen, a model ranks them better
// (tau up by 0.05 at least), and a checkpoint it saves scores them as it does.
void expect_refit_learns_and_saves(train::CostModel& m, const AstSet& fresh,
                                   const train::RefitOptions& ro, const std::string& path) {
  const std::vector<double> truth(fresh.runtime_ns.begin(), fresh.runtime_ns.end());
  const double before = kendall_tau_b(m.score(fresh), truth);
  m.refit({train::Views{nullptr, &fresh}}, ro);
  const auto refitted = m.score(fresh);
  const double after = kendall_tau_b(refitted, truth);
  EXPECT_GT(after, before + 0.05) << before << " -> " << after;
  m.save(path);
  const auto reloaded = train::load_cost_model(path, 1)->score(fresh);
  ASSERT_EQ(reloaded.size(), refitted.size());
  for (size_t i = 0; i < reloaded.size(); ++i)
    EXPECT_NEAR(reloaded[i], refitted[i], 1e-5 * (1 + std::abs(refitted[i])));
}

// The small syntax-tree dataset the tree models' training tests learn from, at dir/ast; returns
// its options (for fresh programs of the same kind).
SynthOptions write_small_ast_dataset(const TempDir& dir) {
  SynthOptions o;
  o.graphs = 10;
  o.configs = 60;
  write_synth_ast_dataset(dir / "ast", o);
  return o;
}

// --train-configs N: each training program cut to N of its configurations at random, drawn
// from the seed: the same seed trains the same model, another cut another, and the cut ones
// learn less from 4 schedules a program than from all 60.
TEST(AstTraining, TrainConfigsCutsEachTrainingProgram) {
  TempDir dir;
  write_small_ast_dataset(dir);
  const auto trained = [&](const std::string& name, int64_t cut) {
    train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / name, 6);
    t.max_train_configs = cut;
    train::train_model(t);
    return evaluate_on(t.out, dir / "ast");
  };
  const ScoreReport all = trained("all.pt", 0), big = trained("big.pt", 1000),
                    cut = trained("cut.pt", 4), again = trained("again.pt", 4);
  EXPECT_EQ(big.mean_kendall_tau, all.mean_kendall_tau);  // a cut above 60 keeps all
  EXPECT_EQ(again.mean_kendall_tau, cut.mean_kendall_tau);
  EXPECT_EQ(again.mean_opa, cut.mean_opa);
  EXPECT_NE(cut.mean_kendall_tau, all.mean_kendall_tau);
  EXPECT_LT(cut.mean_kendall_tau, all.mean_kendall_tau);
  train::TrainOptions x = quick_options(dir / "ast", "xgb", dir / "x.json", 6);
  x.max_train_configs = 4;  // xgb reads its data its own way: refused, not ignored
  EXPECT_THROW(train::train_model(x), UsageError);
}

TEST(AstTraining, AstGcnLearnsSyntaxTreesAndRefusesGraphs) {
  TempDir dir;
  const SynthOptions o = write_small_ast_dataset(dir);
  train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / "ast.pt", 8);
  t.tree_attention = false;  // the first published model as written
  train::train_model(t);
  const ScoreReport r = evaluate_on(t.out, dir / "ast");
  EXPECT_EQ(r.layout_graphs, static_cast<int64_t>(r.per_graph.size()));
  EXPECT_EQ(r.per_graph.front().collection, Collection::kAst);
  EXPECT_GT(r.mean_kendall_tau, 0.3);
  // With attention across the configurations' trees (the default): it learns too, and its
  // checkpoint keeps the option (another model: other scores).
  t.tree_attention = train::TrainOptions().tree_attention;
  EXPECT_TRUE(t.tree_attention);
  t.out = dir / "ast-attention.pt";
  train::train_model(t);
  model::ModelOptions mo = model::ModelOptions::from_json(R"({"name": "ast-gcn"})");
  EXPECT_FALSE(mo.tree_attention);
  mo.tree_attention = true;
  EXPECT_TRUE(model::ModelOptions::from_json(mo.to_json()).tree_attention);
  const ScoreReport ra = evaluate_on(t.out, dir / "ast");
  EXPECT_GT(ra.mean_kendall_tau, 0.3);
  EXPECT_NE(ra.mean_kendall_tau, r.mean_kendall_tau);
  EXPECT_TRUE(train::load_checkpoint(t.out).meta.model.tree_attention);
  EXPECT_FALSE(train::load_checkpoint(dir / "ast.pt").meta.model.tree_attention);
  EXPECT_TRUE(train::load_checkpoint(t.out).meta.model.work_pool);    // ast-gcn's default
  EXPECT_TRUE(train::load_checkpoint(t.out).meta.model.tree_passes);  // ast-gcn's default
  // In memory: refit on the syntax trees of a program it has not seen, it ranks them better,
  // and saves what it learned; a refit without trees is refused.
  {
    SynthOptions fo = o;
    fo.seed = 77;
    const AstSet fresh = make_synth_ast(fo, 0);
    const auto m = train::load_cost_model(t.out, 1);
    train::RefitOptions ro;
    ro.steps = 60;
    ro.lr = 1e-3;
    expect_refit_learns_and_saves(*m, fresh, ro, dir / "ast.refit.pt");
    const Graph g = small_graph(Collection::kLayout);
    EXPECT_THROW(m->refit({train::Views{&g}}, ro), InputError);
  }
  t.model = "tgraph";  // graph models do not read syntax trees
  EXPECT_THROW(train::train_model(t), UsageError);
}

// The trees' hand-crafted features in the head (--hand-features): the normaliser fitted with
// them carries their statistics through the checkpoint, each batch holds them standardised, row
// for row the configurations it was drawn with (each read beside configuration 0, the default
// schedule, as XGBoost reads them), the head's scores move with them, a batch without them is
// refused, and a model that reads no trees refuses the option.
TEST(AstTraining, HandFeaturesReachTheHead) {
  TempDir dir;
  write_small_ast_dataset(dir);
  train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / "hand.pt", 6);
  t.hand_features = true;
  train::train_model(t);
  EXPECT_GT(evaluate_on(t.out, dir / "ast").mean_kendall_tau, 0.3);
  const auto ck = train::load_checkpoint(t.out);
  EXPECT_TRUE(ck.meta.model.hand_features);
  ASSERT_TRUE(ck.normalizer.hand_mean.defined());
  const int w = model::handcrafted_tree_width();
  ASSERT_EQ(ck.normalizer.hand_mean.numel(), w);
  EXPECT_GT(ck.normalizer.hand_std.min().item<float>(), 0);

  std::vector<std::string> tests;
  for (const auto& e : std::filesystem::directory_iterator(dir / "ast/test"))
    tests.push_back(e.path().string());
  std::sort(tests.begin(), tests.end());
  ASSERT_FALSE(tests.empty());
  const AstSet set = load_ast(tests.front());
  const std::vector<int64_t> idx = {3, 1, 4};
  const auto b = model::prepare_ast_batch(set, idx, ck.normalizer);
  ASSERT_TRUE(b.input.hand.defined());
  ASSERT_EQ(b.input.hand.sizes(), (std::vector<int64_t>{3, w}));
  const auto all = model::handcrafted_tree_features(set);
  for (size_t r = 0; r < idx.size(); ++r) {
    const auto row = torch::from_blob(const_cast<float*>(&all[idx[r] * w]), {w}).clone();
    const auto want = ((row - ck.normalizer.hand_mean) / ck.normalizer.hand_std).clamp(-6, 6);
    EXPECT_TRUE(torch::allclose(b.input.hand[static_cast<int64_t>(r)], want, 1e-4, 1e-5)) << r;
  }
  torch::NoGradGuard ng;
  ck.model->eval();
  const auto k = torch::zeros({3, 0});
  const auto scores = ck.model->forward(b.input, k);
  model::GraphInput moved = b.input;
  moved.hand = b.input.hand + 1;
  EXPECT_FALSE(torch::allclose(ck.model->forward(moved, k), scores));

  // A normaliser without their statistics makes batches without them: refused by this model.
  const auto plain = model::prepare_ast_batch(set, idx, model::fit_ast_normalizer(tests));
  EXPECT_FALSE(plain.input.hand.defined());
  EXPECT_THROW(ck.model->forward(plain.input, k), InputError);
  t.model = "tgraph";
  EXPECT_THROW(train::train_model(t), UsageError);
}

// XGBoost on the syntax trees' features (TVM's way): trained on a directory of trees, it ranks
// unseen programs' trees, refuses graphs, refits on a new program's trees (boosting rounds) and
// saves what it learned.
TEST(AstTraining, XgbLearnsSyntaxTreesRefitsAndRefusesGraphs) {
  TempDir dir;
  const SynthOptions o = write_small_ast_dataset(dir);
  const train::TrainOptions t = quick_options(dir / "ast", "xgb", dir / "xgb.pt", 8);
  train::train_model(t);
  const ScoreReport r = evaluate_on(t.out, dir / "ast");
  EXPECT_EQ(r.per_graph.front().collection, Collection::kAst);
  EXPECT_GT(r.mean_kendall_tau, 0.3);
  const auto m = train::load_cost_model(t.out, 1);
  EXPECT_EQ(m->name(), "xgb");
  EXPECT_EQ(m->collection(), Collection::kAst);
  const Graph g = small_graph(Collection::kLayout);
  EXPECT_THROW(m->score(g), InputError);
  EXPECT_THROW(m->refit({train::Views{&g}}, {}), InputError);
  SynthOptions fo = o;
  fo.seed = 77;
  const AstSet fresh = make_synth_ast(fo, 0);
  train::RefitOptions ro;
  ro.steps = 30;
  expect_refit_learns_and_saves(*m, fresh, ro, dir / "xgb.refit.pt");
  // A graph-trained xgb refuses trees.
  TempDir layout;
  write_synth_dataset(layout.str(), o);
  train::train_model(quick_options(layout.str(), "xgb", dir / "xgb-layout.pt", 2));
  EXPECT_THROW(train::load_cost_model(dir / "xgb-layout.pt", 1)->score(fresh), InputError);
}

// Each node's parent (-1 for a root) in the batch of configurations `idx` of `trees`, numbered
// as prepare_ast_batch numbers the batch's nodes (the configurations' nodes one after another).
std::vector<int64_t> batch_parents(const AstSet& trees, const std::vector<int64_t>& idx) {
  std::vector<int64_t> out;
  for (int64_t c : idx) {
    const int64_t base = static_cast<int64_t>(out.size());
    const int64_t n = trees.node_offsets[c + 1] - trees.node_offsets[c];
    out.resize(static_cast<size_t>(base + n), -1);
    for (int64_t e = trees.edge_offsets[c]; e < trees.edge_offsets[c + 1]; ++e)
      out[base + trees.edges[2 * e + 1]] = base + trees.edges[2 * e];
  }
  return out;
}

// Six synthetic syntax trees of one program (written to DIR/t.npz), their normaliser and the
// model dimensions it gives.
struct SixTrees {
  explicit SixTrees(const TempDir& dir)
      : trees(make(dir)), norm(fit(dir)), dims(model::dims_of(norm)) {}
  static AstSet make(const TempDir& dir) {
    SynthOptions so;
    so.configs = 6;
    so.seed = 5;
    AstSet t = make_synth_ast(so, 0);
    save_ast(dir / "t.npz", t);
    return t;
  }
  static model::Normalizer fit(const TempDir& dir) {
    return model::fit_ast_normalizer({dir / "t.npz"});
  }
  // A network's scores of the trees at `idx`, batched together.
  std::vector<float> scores(model::Network& net, const std::vector<int64_t>& idx) const {
    torch::NoGradGuard ng;
    const auto q = model::prepare_ast_batch(trees, idx, norm);
    const auto out = net.forward(q.input, torch::zeros({q.num_configs(), 0}));
    return std::vector<float>(out.data_ptr<float>(), out.data_ptr<float>() + out.numel());
  }
  static constexpr std::initializer_list<int64_t> kAll = {0, 1, 2, 3, 4, 5};
  // The six trees' scores batched together, once each tree is checked to score the same alone.
  std::vector<float> scores_alone_as_together(model::Network& net) const {
    const auto together = scores(net, kAll);
    for (int64_t i = 0; i < 6; ++i)
      EXPECT_NEAR(scores(net, {i})[0], together[i], 1e-4 * (1 + std::abs(together[i]))) << i;
    return together;
  }
  AstSet trees;
  model::Normalizer norm;
  model::ModelDims dims;
};

// The attention pool over a tree's nodes (--work-pool) reads each tree apart from the others of
// its batch: without tree attention, a tree scores the same alone and among others. The
// option is kept in the checkpoint's options, and a batch whose trees' nodes are not
// contiguous is refused, not pooled wrongly.
TEST(AstModels, WorkPoolReadsEachTreeApart) {
  TempDir dir;
  const SixTrees six(dir);
  model::ModelOptions o = model::ModelOptions::from_json(R"({"name": "ast-gcn"})").resolved();
  o.work_pool = true;
  torch::manual_seed(0);
  auto pool = model::make_model(o, six.dims, six.norm);
  EXPECT_TRUE(pool->named_parameters().contains("work_score.weight"));
  six.scores_alone_as_together(*pool);
  EXPECT_TRUE(model::ModelOptions::from_json(o.to_json()).work_pool);

  // Tree ids out of order: refused.
  EXPECT_THROW(
      {
        auto p = model::prepare_ast_batch(six.trees, {0, 1}, six.norm);
        p.input.tree_id = p.input.tree_id.flip(0);
        pool->forward(p.input, torch::zeros({2, 0}));
      },
      InputError);
}

// The passes down and up the trees (--tree-passes) walk each tree level by level: the levels
// hold every node once, each node's parent position is its edge's parent, and the levels put
// back in node order are the identity. Batched, each tree still scores as it does alone (no
// level mixes trees up), a node with two parents is refused, the option survives the
// checkpoint's JSON, trains on syntax trees and is refused for a model without them.
TEST(AstModels, TreePassesWalkEachTreeLevelByLevel) {
  TempDir dir;
  const SixTrees six(dir);
  const auto p = model::prepare_ast_batch(six.trees, {0, 1, 2, 3, 4, 5}, six.norm);
  const std::vector<int64_t> parents = batch_parents(six.trees, {0, 1, 2, 3, 4, 5});
  const auto& in = p.input;
  ASSERT_GE(in.tree_levels.size(), 3u);
  EXPECT_EQ(in.tree_levels[0].size(0), 6);  // one root per tree
  std::vector<int64_t> seen;
  for (size_t d = 0; d < in.tree_levels.size(); ++d) {
    const auto ids = in.tree_levels[d];
    for (int64_t i = 0; i < ids.size(0); ++i) {
      const int64_t v = ids[i].item<int64_t>();
      seen.push_back(v);
      if (d == 0) {
        EXPECT_EQ(parents[v], -1) << v;
      } else {
        const int64_t at = in.tree_parent[d][i].item<int64_t>();
        EXPECT_EQ(in.tree_levels[d - 1][at].item<int64_t>(), parents[v]) << v;
      }
    }
  }
  ASSERT_EQ(static_cast<int64_t>(seen.size()), in.num_nodes);
  const auto order = torch::tensor(seen, torch::kInt64);
  EXPECT_TRUE(torch::equal(order.index_select(0, in.tree_unlevel), torch::arange(in.num_nodes)));
  EXPECT_TRUE(torch::equal(in.tree_order, order));
  // Each node's number of children, at least 1, as the up pass divides by it.
  std::vector<int64_t> children(static_cast<size_t>(in.num_nodes), 0);
  for (int64_t up : parents)
    if (up >= 0) ++children[static_cast<size_t>(up)];
  ASSERT_EQ(in.tree_children.size(), in.tree_levels.size());
  for (size_t d = 0; d < in.tree_levels.size(); ++d) {
    ASSERT_EQ(in.tree_children[d].size(0), in.tree_levels[d].size(0));
    for (int64_t i = 0; i < in.tree_levels[d].size(0); ++i) {
      const int64_t v = in.tree_levels[d][i].item<int64_t>();
      EXPECT_EQ(in.tree_children[d][i][0].item<float>(),
                static_cast<float>(std::max<int64_t>(1, children[static_cast<size_t>(v)])))
          << v;
    }
  }

  model::ModelOptions o = model::ModelOptions::from_json(R"({"name": "ast-gcn"})").resolved();
  o.tree_passes = true;
  torch::manual_seed(0);
  auto net = model::make_model(o, six.dims, six.norm);
  EXPECT_TRUE(net->named_parameters().contains("pass_parent.weight"));
  six.scores_alone_as_together(*net);
  model::ModelOptions plain = o;
  plain.tree_passes = false;
  torch::manual_seed(0);
  auto without = model::make_model(plain, six.dims, six.norm);
  {
    torch::NoGradGuard ng;
    EXPECT_FALSE(torch::allclose(without->forward(in, torch::zeros({6, 0})),
                                 net->forward(in, torch::zeros({6, 0}))));
  }
  EXPECT_TRUE(model::ModelOptions::from_json(o.to_json()).tree_passes);
  EXPECT_FALSE(model::ModelOptions::from_json(R"({"name": "ast-gcn"})").tree_passes);

  AstSet two_parents = six.trees;  // the second edge's child becomes the first edge's too
  ASSERT_GE(two_parents.edge_offsets[1], 2);
  two_parents.edges[3] = two_parents.edges[1];
  EXPECT_THROW(model::prepare_ast_batch(two_parents, {0}, six.norm), InputError);

  write_small_ast_dataset(dir);
  train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / "tp.pt", 6);
  t.tree_passes = 1;
  train::train_model(t);
  EXPECT_TRUE(train::load_checkpoint(t.out).meta.model.tree_passes);
  EXPECT_GT(evaluate_on(t.out, dir / "ast").mean_kendall_tau, 0.3);
  t.model = "sage";
  EXPECT_THROW(train::train_model(t), UsageError);
}

// --threads N holds OpenBLAS's own thread pool to N as well (core/blas.h), in training and when
// a cost model is loaded: LibTorch's set_num_threads does not reach it.
TEST(Threads, TrainingAndLoadingHoldBlasToTheThreadCount) {
  ASSERT_NE(blas_threads(), -1) << "the tests link OpenBLAS (scripts/install-deps.sh)";
  ASSERT_TRUE(set_blas_threads(2));
  if (blas_threads() != 2) GTEST_SKIP() << "OpenBLAS runs at most one thread here";
  TempDir dir;
  write_small_ast_dataset(dir);
  train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / "one.pt", 1);
  train::train_model(t);  // --threads 1
  EXPECT_EQ(blas_threads(), 1);
  train::load_cost_model(t.out, 2);
  EXPECT_EQ(blas_threads(), 2);
  train::load_cost_model(t.out, 0);  // 0: the pools as they are
  EXPECT_EQ(blas_threads(), 2);
  train::load_cost_model(t.out, 1);
  EXPECT_EQ(blas_threads(), 1);
}

// The passes' GRU cell (--tree-pass-cell gru): three gates' weights, each tree scored alone as
// in a batch, other scores than the relu cell's from the same seed, kept in the checkpoint's
// JSON (absent: relu), trains; an unknown cell is refused by the model and by training, and so
// is a cell for a model that makes no passes.
TEST(AstModels, TreePassGruCellGatesEachStep) {
  TempDir dir;
  const SixTrees six(dir);
  model::ModelOptions o = model::ModelOptions::from_json(R"({"name": "ast-gcn"})").resolved();
  EXPECT_EQ(o.tree_pass_cell, "relu");
  o.tree_passes = true;
  o.tree_pass_cell = "gru";
  torch::manual_seed(0);
  auto net = model::make_model(o, six.dims, six.norm);
  EXPECT_EQ(net->named_parameters()["pass_parent.weight"].size(0), 3 * o.hidden);
  const auto together = six.scores_alone_as_together(*net);
  model::ModelOptions relu = o;
  relu.tree_pass_cell = "relu";
  torch::manual_seed(0);
  EXPECT_NE(six.scores(*model::make_model(relu, six.dims, six.norm), SixTrees::kAll), together);
  EXPECT_EQ(model::ModelOptions::from_json(o.to_json()).tree_pass_cell, "gru");
  model::ModelOptions bad = o;
  bad.tree_pass_cell = "lstm";
  EXPECT_THROW(model::make_model(bad, six.dims, six.norm), InputError);

  write_small_ast_dataset(dir);
  train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / "gru.pt", 6);
  t.tree_pass_cell = "gru";
  train::train_model(t);
  EXPECT_EQ(train::load_checkpoint(t.out).meta.model.tree_pass_cell, "gru");
  EXPECT_GT(evaluate_on(t.out, dir / "ast").mean_kendall_tau, 0.3);
  t.tree_passes = 0;
  EXPECT_THROW(train::train_model(t), UsageError);
  t.tree_passes = -1;
  t.tree_pass_cell = "lstm";
  EXPECT_THROW(train::train_model(t), UsageError);
}

// The passes' normalised cell (--tree-pass-cell norm) and the passes over the whole tree
// (--tree-pass-whole): the same seed gives the same weights (the norms start as identities, the
// order adds none), yet other scores than the plain passes'; each tree scores alone as in a
// batch; both survive the checkpoint's JSON (absent: off), train, and are refused for a model
// that makes no passes.
TEST(AstModels, TreePassNormAndWholeTreeOrder) {
  TempDir dir;
  const SixTrees six(dir);
  model::ModelOptions plain = model::ModelOptions::from_json(R"({"name": "ast-gcn"})").resolved();
  plain.tree_passes = true;
  EXPECT_FALSE(plain.tree_pass_whole);
  const auto make = [&](const model::ModelOptions& o) {
    torch::manual_seed(0);
    return model::make_model(o, six.dims, six.norm);
  };
  const auto base = make(plain);
  const auto base_scores = six.scores(*base, SixTrees::kAll);
  model::ModelOptions norm = plain, whole = plain;
  norm.tree_pass_cell = "norm";
  whole.tree_pass_whole = true;
  for (const auto& o : {norm, whole}) {
    const auto net = make(o);
    const auto params = net->named_parameters();
    EXPECT_EQ(params.contains("pass_down_norm.weight"), o.tree_pass_cell == "norm");
    for (const auto& kv : base->named_parameters())
      EXPECT_TRUE(torch::equal(kv.value(), params[kv.key()])) << kv.key();
    EXPECT_NE(six.scores_alone_as_together(*net), base_scores);
    const auto back = model::ModelOptions::from_json(o.to_json());
    EXPECT_EQ(back.tree_pass_cell, o.tree_pass_cell);
    EXPECT_EQ(back.tree_pass_whole, o.tree_pass_whole);
  }

  write_small_ast_dataset(dir);
  train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / "nw.pt", 6);
  t.tree_pass_cell = "norm";
  t.tree_pass_whole = true;
  train::train_model(t);
  const auto meta = train::load_checkpoint(t.out).meta.model;
  EXPECT_EQ(meta.tree_pass_cell, "norm");
  EXPECT_TRUE(meta.tree_pass_whole);
  EXPECT_GT(evaluate_on(t.out, dir / "ast").mean_kendall_tau, 0.3);
  t.tree_passes = 0;
  t.tree_pass_cell = "relu";
  EXPECT_THROW(train::train_model(t), UsageError);  // --tree-pass-whole without passes
}

// Dropout acts in training only: in evaluation an ast-gcn with dropout scores as the same
// weights without it; in training two passes differ. The option survives the checkpoint's JSON,
// and training refuses it for models without it and outside [0, 1).
TEST(AstModels, DropoutActsInTrainingOnly) {
  TempDir dir;
  const SixTrees six(dir);
  const auto p = model::prepare_ast_batch(six.trees, {0, 1, 2, 3, 4, 5}, six.norm);
  const auto scores = [&](model::Network& m) {
    torch::NoGradGuard ng;
    return m.forward(p.input, torch::zeros({p.num_configs(), 0})).clone();
  };
  model::ModelOptions o = model::ModelOptions::from_json(R"({"name": "ast-gcn"})").resolved();
  o.work_pool = true;
  torch::manual_seed(0);
  auto plain = model::make_model(o, six.dims, six.norm);
  o.dropout = 0.5;
  torch::manual_seed(0);
  auto dropped = model::make_model(o, six.dims, six.norm);
  plain->eval();
  dropped->eval();
  EXPECT_TRUE(torch::allclose(scores(*plain), scores(*dropped)));
  dropped->train();
  torch::manual_seed(1);
  const auto first = scores(*dropped);
  const auto second = scores(*dropped);
  EXPECT_FALSE(torch::allclose(first, second));
  EXPECT_FALSE(torch::allclose(first, scores(*plain)));
  EXPECT_DOUBLE_EQ(model::ModelOptions::from_json(o.to_json()).dropout, 0.5);

  write_small_ast_dataset(dir);
  train::TrainOptions t = quick_options(dir / "ast", "ast-gcn", dir / "d.pt", 1);
  t.dropout = 1;
  EXPECT_THROW(train::train_model(t), UsageError);
  t.dropout = 0.1;
  t.model = "xgb";
  EXPECT_THROW(train::train_model(t), UsageError);
  t.model = "sage";
  EXPECT_THROW(train::train_model(t), UsageError);
}

// A data root with both views of the same configurations: ROOT/layout/SPLIT/gI.npz (synthetic
// layout graphs) and ROOT/ast/SPLIT/gI.npz (synthetic syntax trees), the runtimes of both
// taken from one view's cost model, so that only that view tells the configurations apart.
void write_two_views(const std::string& root, bool runtimes_from_trees) {
  SynthOptions o;
  o.configs = 40;
  o.min_nodes = 10;
  o.max_nodes = 20;
  const char* splits[] = {"train", "valid", "test"};
  const int counts[] = {10, 3, 3};
  int index = 0;
  for (int k = 0; k < 3; ++k) {
    fs::create_directories(fs::path(root) / "layout" / splits[k]);
    fs::create_directories(fs::path(root) / "ast" / splits[k]);
    for (int i = 0; i < counts[k]; ++i, ++index) {
      o.collection = Collection::kLayout;
      Graph g = make_synth_graph(o, index);
      AstSet a = make_synth_ast(o, index);
      ASSERT_EQ(a.num_configs, g.num_configs);
      if (runtimes_from_trees)
        g.runtime_ns = a.runtime_ns;
      else
        a.runtime_ns = g.runtime_ns;
      const std::string name = "g" + std::to_string(index) + ".npz";
      save_graph((fs::path(root) / "layout" / splits[k] / name).string(), g);
      save_ast((fs::path(root) / "ast" / splits[k] / name).string(), a);
    }
  }
}

// The costs a two-view model scored for (g, a) are its reference formulation's (batch-major
// TGraph), and its node-major forward agrees with that formulation.
// Both views of every configuration of g, as one batch for the checkpoint's model (now in eval
// mode).
model::PreparedGraph every_config(const train::Checkpoint& ck, const Graph& g, const AstSet& a) {
  const auto p = model::prepare_graph(g, ck.normalizer, ck.model->prune_hops());
  std::vector<int64_t> idx(static_cast<size_t>(g.num_configs));
  std::iota(idx.begin(), idx.end(), 0);
  ck.model->eval();
  return model::select_views(p, a, idx, ck.normalizer);
}

void expect_reference_scores(const train::Checkpoint& ck, const Graph& g, const AstSet& a,
                             const std::vector<double>& cost) {
  torch::NoGradGuard no_grad;
  const auto b = every_config(ck, g, a);
  const auto ref = ck.model->reference_forward(b.input, b.configs);
  EXPECT_TRUE(torch::allclose(ref, ck.model->forward(b.input, b.configs), 1e-4, 1e-4));
  ASSERT_EQ(cost.size(), static_cast<size_t>(ref.size(0)));
  for (size_t i = 0; i < cost.size(); ++i) EXPECT_NEAR(cost[i], ref[i].item<double>(), 1e-3);
}

// tgraph-ast reads both views in one network: it learns whichever view tells the
// configurations apart, round-trips through its checkpoint, scores through the in-memory
// interface from both views only, and refuses data without syntax trees beside the graphs.
TEST(TwoViewTraining, TGraphAstLearnsFromEitherView) {
  TempDir dir;
  for (const bool from_trees : {false, true}) {
    const std::string root = dir / (from_trees ? "trees" : "graphs");
    write_two_views(root, from_trees);
    const train::TrainOptions t = quick_options(root, "tgraph-ast", root + "/model.pt", 6);
    train::train_model(t);
    const ScoreReport r = evaluate_on(t.out, root);
    EXPECT_EQ(r.per_graph.size(), 3u);
    EXPECT_GT(r.mean_kendall_tau, 0.3) << (from_trees ? "runtimes from the trees" : "graphs");

    const auto ck = train::load_checkpoint(t.out);
    ASSERT_TRUE(ck.normalizer.trees);
    EXPECT_EQ(ck.normalizer.trees->collection, Collection::kAst);
    EXPECT_EQ(ck.meta.loss, "hinge-log");
    EXPECT_TRUE(ck.meta.model.work_pool);  // tgraph-ast's default
    auto m = train::load_cost_model(t.out, 1);
    EXPECT_EQ(m->collections(), (std::vector<Collection>{Collection::kLayout, Collection::kAst}));
    const Graph g = load_graph(root + "/layout/test/g13.npz");
    const AstSet a = load_ast(root + "/ast/test/g13.npz");
    const auto cost = m->score(train::Views{&g, &a});
    ASSERT_EQ(cost.size(), static_cast<size_t>(g.num_configs));
    EXPECT_EQ(cost, train::load_cost_model(t.out, 1)->score(train::Views{&g, &a}));
    // The same scores as the network's reference formulation (batch-major TGraph).
    expect_reference_scores(ck, g, a, cost);
    EXPECT_THROW(m->score(g), InputError);                          // the graph alone
    EXPECT_THROW(m->score(train::Views{&g, nullptr}), InputError);  // no trees
    AstSet fewer = select_ast_configs(a, {0, 1, 2});
    EXPECT_THROW(m->score(train::Views{&g, &fewer}), InputError);
    EXPECT_THROW(m->refit({train::Views{&g}}, {}), InputError);  // the graph alone
    // Refit on both views of a program, it ranks that program's configurations better.
    {
      const std::vector<double> truth(g.runtime_ns.begin(), g.runtime_ns.end());
      const double before = kendall_tau_b(cost, truth);
      train::RefitOptions ro;
      ro.steps = 60;
      ro.lr = 1e-3;
      m->refit({train::Views{&g, &a}}, ro);
      const double after = kendall_tau_b(m->score(train::Views{&g, &a}), truth);
      EXPECT_GT(after, before + 0.05) << before << " -> " << after;
    }
    if (!from_trees) {
      // Interrupted after two epochs and resumed, it ends where the straight run ended.
      auto first = t;
      first.out = root + "/resumed.pt";
      first.stop_after = 2;
      train::train_model(first);
      auto rest = first;
      rest.stop_after = 0;
      rest.resume = true;
      train::train_model(rest);
      EXPECT_EQ(train::load_cost_model(rest.out, 1)->score(train::Views{&g, &a}), cost);
    }
  }
  {  // Options of the tree side, trained on the trees' root (two epochs) and read back.
    const std::string root = dir / "trees";
    const Graph g = load_graph(root + "/layout/test/g13.npz");
    const AstSet a = load_ast(root + "/ast/test/g13.npz");
    const auto trained = [&](const std::string& file, const auto& set) {
      train::TrainOptions t = quick_options(root, "tgraph-ast", root + "/" + file, 2);
      set(t);
      train::train_model(t);
      return t;
    };
    // With --hand-features the trees' normaliser holds their statistics and both formulations
    // read them: the same scores.
    {
      const auto t = trained("hand.pt", [](train::TrainOptions& o) { o.hand_features = true; });
      const auto ck = train::load_checkpoint(t.out);
      EXPECT_TRUE(ck.meta.model.hand_features);
      ASSERT_TRUE(ck.normalizer.trees);
      ASSERT_TRUE(ck.normalizer.trees->hand_mean.defined());
      const auto cost = train::load_cost_model(t.out, 1)->score(train::Views{&g, &a});
      ASSERT_EQ(cost.size(), static_cast<size_t>(g.num_configs));
      expect_reference_scores(ck, g, a, cost);
    }
    // With --tree-skip the trees' own linear score is a parameter of the checkpoint, both
    // formulations add it (the same scores), and it moves them; ast-gcn refuses the option.
    {
      auto t = trained("skip.pt", [](train::TrainOptions& o) { o.tree_skip = true; });
      const auto ck = train::load_checkpoint(t.out);
      EXPECT_TRUE(ck.meta.model.tree_skip);
      const auto cost = train::load_cost_model(t.out, 1)->score(train::Views{&g, &a});
      expect_reference_scores(ck, g, a, cost);
      torch::Tensor bias;
      for (const auto& p : ck.model->named_parameters())
        if (p.key() == "skip.bias") bias = p.value();
      ASSERT_TRUE(bias.defined()) << "no skip.bias among the parameters";
      torch::NoGradGuard ng;
      const auto b = every_config(ck, g, a);
      const auto before = ck.model->forward(b.input, b.configs);
      bias.add_(1.0);  // the skip's bias: every configuration's score one higher
      EXPECT_TRUE(torch::allclose(ck.model->forward(b.input, b.configs), before + 1, 1e-4, 1e-4));
      t.model = "ast-gcn";
      t.data = root + "/ast";
      EXPECT_THROW(train::train_model(t), UsageError);
    }
  }
  // A root without ast/, and a layout root, are usage errors; a twin whose configurations
  // differ is an input error naming both files.
  train::TrainOptions t = quick_options(dir / "graphs/layout", "tgraph-ast", dir / "bad.pt", 1);
  EXPECT_THROW(train::train_model(t), UsageError);
  const std::string root = dir / "graphs";
  AstSet a = load_ast(root + "/ast/train/g0.npz");
  a.runtime_ns[0] += 1;
  save_ast(root + "/ast/train/g0.npz", a);
  t.data = root;
  EXPECT_THROW(train::train_model(t), InputError);
}

// A stand-in syntax-tree model: costs from the trees' node counts, so that an ensemble's view
// dispatch can be checked without training.
class TreeSizeModel final : public train::CostModel {
 public:
  std::string name() const override { return "tree-size"; }
  Collection collection() const override { return Collection::kAst; }
  std::vector<double> score(const Graph&) override { throw InputError("trees only"); }
  std::vector<double> score(const AstSet& s) override {
    std::vector<double> c;
    for (int64_t i = 0; i < s.num_configs; ++i)
      c.push_back(static_cast<double>(s.node_offsets[i + 1] - s.node_offsets[i]));
    return c;
  }
  void refit(const std::vector<train::Views>&, const train::RefitOptions&) override {}
  void save(const std::string&) const override {}
};

std::vector<double> zscores(const std::vector<double>& c) {
  double mean = 0, var = 0;
  for (double x : c) mean += x / c.size();
  for (double x : c) var += (x - mean) * (x - mean) / c.size();
  std::vector<double> z;
  for (double x : c) z.push_back(var > 0 ? (x - mean) / std::sqrt(var) : 0.0);
  return z;
}

// Ensembles: the weighted mean of the members' standardised costs, from the ensemble file
// `write_ensemble` writes and from save(); graph and syntax-tree members read their own view;
// bad ensembles are clear errors.
TEST_F(Training, EnsemblesAverageStandardisedCostsAcrossViews) {
  TempDir out;
  for (const std::string name : {"tgraph", "xgb"}) {
    auto t = options(name, out / (name + ".pt"));
    t.epochs = 1;
    train::train_model(t);
  }
  const std::string gpath = fs::directory_iterator(fs::path(dir_->str()) / "test")->path().string();
  const Graph g = load_graph(gpath);
  const auto a = train::load_cost_model(out / "tgraph.pt", 1)->score(g);
  const auto b = train::load_cost_model(out / "xgb.pt", 1)->score(g);
  const auto za = zscores(a), zb = zscores(b);

  train::write_ensemble(out / "ens.json", {"tgraph.pt", out / "xgb.pt"}, {3.0, 1.0});
  const auto ens = train::load_cost_model(out / "ens.json", 1);
  EXPECT_EQ(ens->name(), "ensemble");
  EXPECT_EQ(ens->collection(), Collection::kLayout);
  const auto c = ens->score(g);
  ASSERT_EQ(c.size(), a.size());
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i], (3 * za[i] + zb[i]) / 4, 1e-9);
  // Equal weights by default; save() writes the members beside the file and reads back.
  train::write_ensemble(out / "equal.json", {"tgraph.pt", "xgb.pt"});
  const auto eq = train::load_cost_model(out / "equal.json", 1);
  const auto ce = eq->score(g);
  for (size_t i = 0; i < ce.size(); ++i) EXPECT_NEAR(ce[i], (za[i] + zb[i]) / 2, 1e-9);
  eq->save(out / "saved.json");
  EXPECT_TRUE(fs::exists(out / "saved.json.member0"));
  const auto cs = train::load_cost_model(out / "saved.json", 1)->score(g);
  for (size_t i = 0; i < cs.size(); ++i) EXPECT_NEAR(cs[i], ce[i], 1e-6);
  // eval reads the ensemble like a checkpoint.
  EXPECT_GT(evaluate_on(out / "ens.json", dir_->str()).mean_kendall_tau, 0.2);

  // A syntax-tree member: the ensemble needs both views, and says so when given one.
  SynthOptions so;
  so.configs = g.num_configs;
  AstSet trees = make_synth_ast(so, 0);
  trees.runtime_ns = g.runtime_ns;
  std::vector<std::unique_ptr<train::CostModel>> members;
  members.push_back(train::load_cost_model(out / "tgraph.pt", 1));
  members.push_back(std::make_unique<TreeSizeModel>());
  const auto mixed = train::make_ensemble(std::move(members));
  EXPECT_EQ(mixed->collection(), Collection::kAst);
  EXPECT_EQ(mixed->collections(), (std::vector<Collection>{Collection::kLayout, Collection::kAst}));
  EXPECT_THROW(mixed->score(g), InputError);
  EXPECT_THROW(mixed->score(trees), InputError);
  // The members say which view is missing in one wording (train::require_views): the tree
  // member through the interface's own dispatch (CostModel::score(Views)).
  try {
    mixed->score(train::Views{&g, nullptr});
    FAIL() << "scored without the trees";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "tree-size reads syntax trees; the trees were not given");
  }
  try {
    const std::unique_ptr<train::CostModel> alone = std::make_unique<TreeSizeModel>();
    alone->score(train::Views{});
    FAIL() << "scored nothing";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "tree-size reads syntax trees; the trees were not given");
  }
  try {
    train::load_cost_model(out / "tgraph.pt", 1)->score(train::Views{nullptr, &trees});
    FAIL() << "scored without the graph";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "tgraph reads graphs; the graph was not given");
  }
  const auto cm = mixed->score(train::Views{&g, &trees});
  const auto zt = zscores(TreeSizeModel().score(trees));
  ASSERT_EQ(cm.size(), za.size());
  for (size_t i = 0; i < cm.size(); ++i) EXPECT_NEAR(cm[i], (za[i] + zt[i]) / 2, 1e-9);
  // Evaluated from a root holding both views side by side; twins must match.
  fs::create_directories(out / "views/layout/test");
  fs::create_directories(out / "views/ast/test");
  save_graph(out / "views/layout/test/p.npz", g, false);
  save_ast(out / "views/ast/test/p.npz", trees, false);
  const ScoreReport r = train::evaluate_cost_model(*mixed, out / "views", "test");
  ASSERT_EQ(r.per_graph.size(), 1u);
  EXPECT_NEAR(r.per_graph[0].kendall_tau, kendall_tau_b(cm, g.targets()), 1e-12);
  AstSet other = trees;
  other.runtime_ns.back() += 1;
  save_ast(out / "views/ast/test/p.npz", other, false);
  EXPECT_THROW(train::evaluate_cost_model(*mixed, out / "views", "test"), InputError);
  fs::remove(out / "views/ast/test/p.npz");
  EXPECT_THROW(train::evaluate_cost_model(*mixed, out / "views", "test"), InputError);

  // Bad ensembles.
  EXPECT_THROW(train::make_ensemble({}), UsageError);
  EXPECT_THROW(train::write_ensemble(out / "w.json", {"tgraph.pt"}, {0.0}), UsageError);
  EXPECT_THROW(train::write_ensemble(out / "w.json", {"tgraph.pt"}, {1.0, 1.0}), UsageError);
  EXPECT_THROW(train::write_ensemble(out / "w.json", {"missing.pt"}), InputError);
  const auto write = [&](const std::string& file, const std::string& text) {
    std::ofstream f(out / file);
    f << text;
  };
  write("broken.json", "{\"format\": \"tcost-ensemble\", \"members\": [");
  write("other.json", "{\"format\": \"something\"}");
  write("cycle.json",
        "{\"format\": \"tcost-ensemble\", \"members\": [{\"checkpoint\": \"cycle.json\"}]}");
  write("noweight.json",
        "{\"format\": \"tcost-ensemble\", \"members\": [{\"checkpoint\": \"xgb.pt\", "
        "\"weight\": \"x\"}]}");
  for (const char* f : {"broken.json", "other.json", "cycle.json", "noweight.json"}) {
    EXPECT_THROW(train::load_cost_model(out / f, 1), InputError) << f;
  }
}

TEST_F(Training, BadCheckpointsAreInputErrors) {
  TempDir out;
  const std::string g = fs::directory_iterator(fs::path(dir_->str()) / "test")->path().string();
  {
    std::ofstream f(out / "junk.pt");
    f << "not a checkpoint";
  }
  EXPECT_THROW(train::predict_costs(out / "junk.pt", g), InputError);
  EXPECT_THROW(train::predict_costs(out / "missing.pt", g), InputError);
  // A checkpoint written under another feature schema is refused with a clear message.
  torch::serialize::OutputArchive a;
  a.write("meta", c10::IValue(std::string(
                      R"({"format":"tcost-checkpoint","format_version":1,"feature_schema":999})")));
  a.save_to(out / "old.pt");
  try {
    train::predict_costs(out / "old.pt", g);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("feature schema 999"), std::string::npos) << e.what();
  }
  // Truncated weights.
  auto t = options("tgraph", out / "t.pt");
  t.epochs = 1;
  train::train_model(t);
  const auto size = fs::file_size(t.out);
  fs::resize_file(t.out, size / 2);
  EXPECT_THROW(train::predict_costs(t.out, g), InputError);
}

}  // namespace
}  // namespace tcost
