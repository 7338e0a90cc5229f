#include "train/xgb.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/tpugraphs_io.h"
#include "model/handcrafted.h"

namespace tcost::train {
namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw InputError(fmt::format("XGBoost {} failed: {}", what, XGBGetLastError()));
}

// Owns XGBoost handles.
struct Matrix {
  DMatrixHandle h = nullptr;
  ~Matrix() {
    if (h) XGDMatrixFree(h);
  }
};
struct Booster {
  BoosterHandle h = nullptr;
  ~Booster() {
    if (h) XGBoosterFree(h);
  }
};

struct Table {
  std::vector<float> x, label;
  std::vector<unsigned> groups;
  int width = 0;
};

// One program's rows: features, relevance (higher = faster) and its group.
void append_rows(Table& t, const std::vector<float>& features, int width,
                 const std::vector<double>& runtime) {
  t.width = width;
  t.x.insert(t.x.end(), features.begin(), features.end());
  double best = 1e300;
  for (const double r : runtime) best = std::min(best, r);
  for (const double r : runtime) t.label.push_back(static_cast<float>(-std::log(r / best)));
  t.groups.push_back(static_cast<unsigned>(runtime.size()));
}

void append(Table& t, const Graph& g) {
  append_rows(t, model::handcrafted_features(g), model::handcrafted_width(g.collection),
              g.targets());
}

void append(Table& t, const AstSet& s) {
  append_rows(t, model::handcrafted_tree_features(s), model::handcrafted_tree_width(),
              std::vector<double>(s.runtime_ns.begin(), s.runtime_ns.end()));
}

void to_matrix(const Table& t, Matrix& m, bool labelled) {
  check(XGDMatrixCreateFromMat(t.x.data(), t.x.size() / t.width, t.width, NAN, &m.h), "matrix");
  if (labelled) {
    check(XGDMatrixSetFloatInfo(m.h, "label", t.label.data(), t.label.size()), "labels");
    check(XGDMatrixSetUIntInfo(m.h, "group", t.groups.data(), t.groups.size()), "groups");
  }
}

// Predicted costs (higher = slower) of every configuration of a graph or syntax-tree set.
template <typename View>
std::vector<double> predict(BoosterHandle b, const View& v) {
  Table t;
  append(t, v);
  Matrix m;
  to_matrix(t, m, false);
  bst_ulong len = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(b, m.h, 0, 0, 0, &len, &out), "predict");
  std::vector<double> cost(len);
  for (bst_ulong i = 0; i < len; ++i) cost[i] = -static_cast<double>(out[i]);  // higher = slower
  return cost;
}

// The validation programs in either view, and how each is judged: Kendall's tau for layout
// graphs and syntax trees, -slowdown@5 for tile graphs (as the neural trainer does).
struct Valid {
  std::vector<Graph> graphs;
  std::vector<AstSet> trees;
  double metric(BoosterHandle b) const {
    std::vector<double> m;
    for (const auto& g : graphs) {
      const auto cost = predict(b, g);
      const auto truth = g.targets();
      m.push_back(g.collection == Collection::kLayout ? kendall_tau_b(cost, truth)
                                                      : -slowdown_at_k(cost, truth, 5));
    }
    for (const auto& s : trees)
      m.push_back(kendall_tau_b(predict(b, s),
                                std::vector<double>(s.runtime_ns.begin(), s.runtime_ns.end())));
    return m.empty() ? 0.0 : mean_ignoring_nan(m);
  }
};

}  // namespace

void train_xgb(const TrainOptions& o) {
  if (o.out.empty()) throw UsageError("--out is required");
  const Dataset ds(o.data);
  if (ds.files(Split::kTrain).empty())
    throw InputError(fmt::format("{}: no training graphs", o.data));
  // Syntax-tree data (ast/ of a collection) trains on the trees' features, graphs on theirs.
  const bool trees = is_ast_file(ds.files(Split::kTrain).front());
  Table train;
  Valid valid;
  // The normaliser carries the collection and widths (the first training program's), checked
  // when predicting.
  model::Normalizer norm;
  for (const auto& f : ds.files(Split::kTrain)) {
    if (trees) {
      const AstSet s = load_ast(f);
      if (train.groups.empty()) {
        norm.collection = Collection::kAst;
        norm.node_feat_width = s.node_feat_width;
        norm.config_feat_width = 0;
      }
      append(train, s);
      continue;
    }
    Graph g = load_graph(f);
    if (train.groups.empty()) {
      norm.collection = g.collection;
      norm.node_feat_width = g.node_feat_width;
      norm.config_feat_width = g.config_feat_width;
    }
    merge_duplicate_configs(g);
    canonicalize_layout_padding(g);
    append(train, g);
  }
  for (const auto& f : ds.files(Split::kValid)) {
    if (trees) {
      valid.trees.push_back(first_ast_configs(load_ast(f), o.max_valid_configs));
      continue;
    }
    Graph g = load_graph(f);
    if (o.max_valid_configs > 0) g = subsample_configs(g, o.max_valid_configs, 99);
    canonicalize_layout_padding(g);
    valid.graphs.push_back(std::move(g));
  }
  Matrix dtrain;
  to_matrix(train, dtrain, true);
  Booster b;
  check(XGBoosterCreate(&dtrain.h, 1, &b.h), "create");
  const std::string seed = std::to_string(o.seed);
  const std::string threads = std::to_string(std::max(0, o.threads));
  const std::pair<const char*, const char*> params[] = {{"objective", "rank:pairwise"},
                                                        {"eta", "0.1"},
                                                        {"max_depth", "6"},
                                                        {"subsample", "0.8"},
                                                        {"colsample_bytree", "0.8"},
                                                        {"seed", seed.c_str()},
                                                        {"nthread", threads.c_str()},
                                                        {"verbosity", "0"}};
  for (const auto& [k, v] : params) check(XGBoosterSetParam(b.h, k, v), "set parameter");
  const int rounds = std::max(20, o.epochs * 5);
  const std::string log_path = o.log.empty() ? o.out + ".log.jsonl" : o.log;
  std::ofstream log(log_path);
  double best = -2;
  std::vector<uint8_t> best_bytes;
  int since_best = 0;
  for (int it = 0; it < rounds; ++it) {
    check(XGBoosterUpdateOneIter(b.h, it, dtrain.h), "update");
    if ((it + 1) % 10 != 0 && it + 1 != rounds) continue;
    const double tau = valid.metric(b.h);
    log << nlohmann::json{{"round", it + 1}, {"valid_metric", tau}}.dump() << '\n';
    if (!o.quiet)
      fmt::print("round {:>4}/{}  valid {:.4f}{}\n", it + 1, rounds, tau, tau > best ? " *" : "");
    if (tau > best || best_bytes.empty()) {
      best = tau;
      since_best = 0;
      bst_ulong len = 0;
      const char* buf = nullptr;
      check(XGBoosterSaveModelToBuffer(b.h, "{\"format\": \"ubj\"}", &len, &buf), "save");
      best_bytes.assign(buf, buf + len);
    } else if (++since_best * 10 >= o.patience * 5) {
      break;
    }
  }
  CheckpointMeta meta;
  meta.model.name = "xgb";
  meta.epoch = rounds;
  meta.valid_tau = best;
  meta.best_valid_tau = best;
  meta.loss = "rank:pairwise";
  norm.node_mean = torch::zeros({norm.node_feat_width});
  norm.node_std = torch::ones({norm.node_feat_width});
  norm.tile_mean = torch::zeros({norm.config_feat_width});
  norm.tile_std = torch::ones({norm.config_feat_width});
  save_checkpoint(o.out, meta, norm, nullptr, best_bytes, nullptr);
  if (!o.quiet) fmt::print("best valid {:.4f}; checkpoint {}\n", best, o.out);
}

XgbBooster::XgbBooster(const std::vector<uint8_t>& model_bytes, int threads) {
  BoosterHandle h = nullptr;
  check(XGBoosterCreate(nullptr, 0, &h), "create");
  handle_ = h;
  check(XGBoosterLoadModelFromBuffer(h, model_bytes.data(), model_bytes.size()), "load");
  if (threads > 0)
    check(XGBoosterSetParam(h, "nthread", std::to_string(threads).c_str()), "threads");
}

XgbBooster::~XgbBooster() {
  if (handle_) XGBoosterFree(static_cast<BoosterHandle>(handle_));
}

std::vector<double> XgbBooster::predict(const Graph& graph) const {
  Graph g = graph;
  canonicalize_layout_padding(g);
  return tcost::train::predict(static_cast<BoosterHandle>(handle_), g);
}

std::vector<double> XgbBooster::predict(const AstSet& s) const {
  return tcost::train::predict(static_cast<BoosterHandle>(handle_), s);
}

void XgbBooster::boost(const std::vector<Graph>& measured, const std::vector<AstSet>& trees,
                       int rounds) {
  Table t;
  for (Graph g : measured) {
    canonicalize_layout_padding(g);
    append(t, g);
  }
  for (const AstSet& s : trees) append(t, s);
  if (t.groups.empty()) return;
  Matrix m;
  to_matrix(t, m, true);
  // Continues the loaded model: the iteration number only seeds row subsampling.
  for (int i = 0; i < rounds; ++i, ++rounds_done_)
    check(XGBoosterUpdateOneIter(static_cast<BoosterHandle>(handle_), 100000 + rounds_done_, m.h),
          "update");
}

std::vector<uint8_t> XgbBooster::bytes() const {
  bst_ulong len = 0;
  const char* buf = nullptr;
  check(XGBoosterSaveModelToBuffer(static_cast<BoosterHandle>(handle_), "{\"format\": \"ubj\"}",
                                   &len, &buf),
        "save");
  return std::vector<uint8_t>(buf, buf + len);
}

}  // namespace tcost::train
