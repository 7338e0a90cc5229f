// The in-memory cost models behind train/cost_model.h:
//   NeuralCostModel - a LibTorch network with its normaliser; refit fine-tunes it with the loss
//                     it was trained with (AdamW, clipping), on seeded batches of the measured
//                     configurations in the views it reads (graphs, syntax trees or both).
//   XgbCostModel    - the XGBoost booster, loaded once, on graphs or on syntax trees (as it was
//                     trained); refit adds boosting rounds fitted to the measured programs
//                     (training continuation).
#include "train/cost_model.h"

#include <torch/torch.h>

#include <numeric>
#include <random>

#include <fmt/format.h>

#include "core/error.h"
#include "model/models.h"
#include "train/api.h"
#include "train/checkpoint.h"
#include "train/ensemble.h"
#include "train/step.h"
#include "train/xgb.h"

namespace tcost::train {
namespace {

constexpr int64_t kChunk = 256;  // configurations per forward pass at most (see chunking.h)

void check_fits(const Graph& g, const model::Normalizer& n, const std::string& model) {
  if (g.collection != n.collection || g.node_feat_width != n.node_feat_width ||
      g.config_feat_width != n.config_feat_width) {
    throw InputError(fmt::format(
        "{}: a {} graph with {} node and {} config features, but the {} model reads {} graphs "
        "with {} and {}",
        g.source.empty() ? g.name : g.source, collection_name(g.collection), g.node_feat_width,
        g.config_feat_width, model, collection_name(n.collection), n.node_feat_width,
        n.config_feat_width));
  }
}

class NeuralCostModel final : public CostModel {
 public:
  explicit NeuralCostModel(Checkpoint ck) : ck_(std::move(ck)) {}
  using CostModel::score;  // the Views overload
  std::string name() const override { return ck_.meta.model.name; }
  Collection collection() const override { return ck_.normalizer.collection; }

  std::vector<Collection> collections() const override {
    if (ck_.normalizer.trees) return {Collection::kLayout, Collection::kAst};
    return {collection()};
  }

  std::vector<double> score(const Graph& g) override {
    if (collection() == Collection::kAst)
      throw InputError(fmt::format("{}: ast-gcn scores syntax trees, not graphs", g.name));
    if (ck_.normalizer.trees) {
      throw InputError(fmt::format(
          "{}: {} reads each configuration's syntax tree beside the graph, and none was given "
          "(tcost rank --ast, or tcost eval --data on a directory holding layout/ and ast/)",
          g.name, name()));
    }
    check_fits(g, ck_.normalizer, name());
    const auto prepared = model::prepare_graph(g, ck_.normalizer, ck_.model->prune_hops());
    return predict_prepared(*ck_.model, prepared, kChunk, ck_.meta.model.hidden);
  }

  std::vector<double> score(const Views& v) override {
    if (!ck_.normalizer.trees) return CostModel::score(v);
    require_views(v, true, true, name());
    check_fits(*v.graph, ck_.normalizer, name());  // select_views checks the trees fit the graph
    const auto prepared = model::prepare_graph(*v.graph, ck_.normalizer, ck_.model->prune_hops());
    return predict_prepared(*ck_.model, prepared, kChunk, ck_.meta.model.hidden, v.ast,
                            &ck_.normalizer);
  }

  std::vector<double> score(const AstSet& s) override {
    if (collection() != Collection::kAst)
      throw InputError(fmt::format(
          "{}: syntax trees need a model trained on them (ast-gcn, or xgb on trees), not {}",
          s.name, name()));
    return predict_ast(*ck_.model, s, ck_.normalizer, kChunk);
  }

  void refit(const std::vector<Views>& measured, const RefitOptions& o) override {
    // Each program in the views the network reads; every step draws a batch from one of them.
    struct Item {
      model::PreparedGraph graph;     // the layout or tile view (not read by ast-gcn)
      const AstSet* trees = nullptr;  // the syntax-tree view (ast-gcn, tgraph-ast)
      int64_t configs = 0;
    };
    const bool reads_graph = collection() != Collection::kAst;
    const bool reads_trees = !reads_graph || ck_.normalizer.trees != nullptr;
    std::vector<Item> items;
    for (const Views& v : measured) {
      require_views(v, reads_graph, reads_trees, name());
      Item it;
      it.configs = reads_graph ? v.graph->num_configs : v.ast->num_configs;
      if (it.configs < 2) continue;
      if (reads_trees) it.trees = v.ast;
      if (reads_graph) {
        check_fits(*v.graph, ck_.normalizer, name());
        it.graph = model::prepare_graph(*v.graph, ck_.normalizer, ck_.model->prune_hops());
      }
      items.push_back(std::move(it));
    }
    if (items.empty() || o.steps <= 0) return;
    if (!opt_) {
      opt_ = std::make_unique<torch::optim::AdamW>(
          ck_.model->parameters(), torch::optim::AdamWOptions(o.lr).weight_decay(1e-5));
    }
    StepOptions so;
    so.loss = ck_.meta.loss.empty() ? resolve_loss("auto", name()) : ck_.meta.loss;
    so.lr = o.lr;
    std::mt19937_64 rng(o.seed);
    torch::manual_seed(o.seed);
    for (int step = 0; step < o.steps; ++step) {
      const Item& it = items[step % items.size()];
      std::vector<int64_t> idx(static_cast<size_t>(it.configs));
      std::iota(idx.begin(), idx.end(), 0);
      std::shuffle(idx.begin(), idx.end(), rng);
      idx.resize(std::min<size_t>(idx.size(), static_cast<size_t>(o.configs_per_step)));
      const model::PreparedGraph batch =
          !reads_graph          ? model::prepare_ast_batch(*it.trees, idx, ck_.normalizer)
          : it.trees != nullptr ? model::select_views(it.graph, *it.trees, idx, ck_.normalizer)
                                : model::select_configs(it.graph, torch::tensor(idx));
      optimizer_step(*ck_.model, *opt_, batch, ck_.normalizer, so);
    }
  }

  void save(const std::string& path) const override {
    save_checkpoint(path, ck_.meta, ck_.normalizer, ck_.model, {}, nullptr);
  }

 private:
  Checkpoint ck_;
  std::unique_ptr<torch::optim::AdamW> opt_;  // kept across refits (Adam's moments)
};

class XgbCostModel final : public CostModel {
 public:
  XgbCostModel(Checkpoint ck, int threads) : ck_(std::move(ck)), booster_(ck_.xgb_model, threads) {}
  using CostModel::score;  // the Views overload
  std::string name() const override { return "xgb"; }
  Collection collection() const override { return ck_.normalizer.collection; }
  std::vector<double> score(const Graph& g) override {
    if (reads_trees())
      throw InputError(fmt::format(
          "{}: this xgb was trained on syntax trees and scores them, not graphs", g.name));
    check_fits(g, ck_.normalizer, name());
    return booster_.predict(g);
  }
  std::vector<double> score(const AstSet& s) override {
    if (!reads_trees())
      throw InputError(fmt::format(
          "{}: this xgb was trained on {} graphs; syntax trees need one trained on them", s.name,
          collection_name(collection())));
    check_tree_width(s);
    return booster_.predict(s);
  }
  void refit(const std::vector<Views>& measured, const RefitOptions& o) override {
    std::vector<Graph> graphs;
    std::vector<AstSet> trees;
    for (const Views& v : measured) {
      require_views(v, !reads_trees(), reads_trees(), name());
      if (reads_trees()) {
        if (v.ast->num_configs < 2) continue;
        check_tree_width(*v.ast);
        trees.push_back(*v.ast);
        continue;
      }
      if (v.graph->num_configs < 2) continue;
      check_fits(*v.graph, ck_.normalizer, name());
      graphs.push_back(*v.graph);
    }
    if (o.steps > 0) booster_.boost(graphs, trees, o.steps);
  }
  void save(const std::string& path) const override {
    save_checkpoint(path, ck_.meta, ck_.normalizer, nullptr, booster_.bytes(), nullptr);
  }

 private:
  bool reads_trees() const { return collection() == Collection::kAst; }
  void check_tree_width(const AstSet& s) const {
    if (s.node_feat_width != ck_.normalizer.node_feat_width)
      throw InputError(fmt::format("{}: syntax trees with {} node features, the xgb model reads {}",
                                   s.source.empty() ? s.name : s.source, s.node_feat_width,
                                   ck_.normalizer.node_feat_width));
  }

  Checkpoint ck_;
  XgbBooster booster_;
};

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> n = model::model_names();
    n.push_back("tgraph-ast");
    n.push_back("ast-gcn");
    n.push_back("xgb");
    return n;
  }();
  return kNames;
}

std::unique_ptr<CostModel> load_cost_model(const std::string& checkpoint, int threads) {
  if (is_ensemble_file(checkpoint)) return load_ensemble(checkpoint, threads);
  set_threads(threads);
  Checkpoint ck = load_checkpoint(checkpoint);
  if (ck.meta.model.name == "xgb") return std::make_unique<XgbCostModel>(std::move(ck), threads);
  if (!ck.model) throw InputError(fmt::format("{}: the checkpoint holds no network", checkpoint));
  return std::make_unique<NeuralCostModel>(std::move(ck));
}

}  // namespace tcost::train
