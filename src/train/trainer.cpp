// Losses, the training loop, evaluation and prediction for the neural models.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/progress.h"
#include "core/prune.h"
#include "core/tpugraphs_io.h"
#include "train/api.h"
#include "train/checkpoint.h"
#include "train/chunking.h"
#include "train/losses.h"
#include "train/xgb.h"

namespace tcost::train {

torch::Tensor listmle_loss(const torch::Tensor& cost, const torch::Tensor& target) {
  const auto order = std::get<1>(target.sort(0, /*descending=*/false));  // fastest first
  const auto s = (-cost).index_select(0, order);
  // log sum_{j >= i} exp(s_j), for every i: a reversed cumulative log-sum-exp.
  const auto tail = torch::logcumsumexp(s.flip(0), 0).flip(0);
  return (tail - s).mean();
}

torch::Tensor hinge_loss(const torch::Tensor& cost, const torch::Tensor& target, double margin) {
  const auto faster =
      (target.unsqueeze(1) < target.unsqueeze(0)).to(cost.dtype());  // i faster than j
  const auto diff = cost.unsqueeze(0) - cost.unsqueeze(1);           // [i][j] = cost_j - cost_i
  const auto pairs = faster.sum().clamp_min(1);
  return (torch::relu(margin - diff) * faster).sum() / pairs;
}

torch::Tensor mse_loss(const torch::Tensor& cost, const torch::Tensor& target, double log_mean,
                       double log_std) {
  const auto y = ((target.log() - log_mean) / log_std).to(cost.dtype());
  return (cost - y).pow(2).mean();
}

namespace {

using Clock = std::chrono::steady_clock;

double peak_rss_mib() {
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void set_threads(int threads) {
  if (threads > 0) torch::set_num_threads(threads);
}

// Costs of all configurations of a prepared graph, in chunks, without gradients.
std::vector<double> predict_prepared(model::CostModel& m, const model::PreparedGraph& g,
                                     int64_t chunk, int64_t hidden) {
  torch::NoGradGuard no_grad;
  m.eval();
  const int64_t c = g.num_configs();
  const int64_t step = configs_per_pass(chunk, g.input.num_nodes, hidden, kInferenceBudget);
  std::vector<double> out(static_cast<size_t>(c));
  for (int64_t s = 0; s < c; s += step) {
    const int64_t len = std::min(step, c - s);
    const auto cost =
        m.forward(g.input, g.configs.narrow(0, s, len)).to(torch::kFloat64).contiguous();
    std::copy_n(cost.data_ptr<double>(), len, out.begin() + s);
  }
  return out;
}

// A training graph: prepared once (small graphs), or kept raw and cut into segments per step.
struct TrainItem {
  Graph raw;                      // kept only when segmenting
  model::PreparedGraph prepared;  // whole graph otherwise
  bool segmented = false;
  std::shared_ptr<AstSet> ast;  // syntax trees: batches are built per step
};

// Costs of all configurations of a syntax-tree program, batch by batch.
std::vector<double> predict_ast(model::CostModel& m, const AstSet& set,
                                const model::Normalizer& norm, int64_t chunk) {
  torch::NoGradGuard no_grad;
  m.eval();
  std::vector<double> out;
  for (int64_t s = 0; s < set.num_configs; s += chunk) {
    std::vector<int64_t> idx;
    for (int64_t c = s; c < std::min(set.num_configs, s + chunk); ++c) idx.push_back(c);
    const auto b = model::prepare_ast_batch(set, idx, norm);
    const auto cost = m.forward(b.input, b.configs).to(torch::kFloat64).contiguous();
    out.insert(out.end(), cost.data_ptr<double>(), cost.data_ptr<double>() + cost.numel());
  }
  return out;
}

GraphScore score_ast(const AstSet& set, const std::vector<double>& cost) {
  GraphScore s;
  s.id = set.name;
  s.collection = Collection::kAst;
  s.configs = set.num_configs;
  s.listed = set.num_configs;
  const std::vector<double> truth(set.runtime_ns.begin(), set.runtime_ns.end());
  s.kendall_tau = kendall_tau_b(cost, truth);
  s.opa = ordered_pair_accuracy(cost, truth);
  s.slowdown_1 = slowdown_at_k(cost, truth, 1);
  s.slowdown_5 = slowdown_at_k(cost, truth, 5);
  s.slowdown_10 = slowdown_at_k(cost, truth, 10);
  return s;
}

model::PreparedGraph sample_step(const TrainItem& item, const model::Normalizer& norm,
                                 int prune_hops, int64_t k, int64_t segment, std::mt19937_64& rng) {
  if (item.ast) {
    std::vector<int64_t> idx(static_cast<size_t>(item.ast->num_configs));
    std::iota(idx.begin(), idx.end(), 0);
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(static_cast<size_t>(std::min<int64_t>(k, item.ast->num_configs)));
    return model::prepare_ast_batch(*item.ast, idx, norm);
  }
  if (!item.segmented) {
    const int64_t c = item.prepared.num_configs();
    std::vector<int64_t> idx(static_cast<size_t>(c));
    std::iota(idx.begin(), idx.end(), 0);
    std::shuffle(idx.begin(), idx.end(), rng);
    idx.resize(static_cast<size_t>(std::min(k, c)));
    return model::select_configs(item.prepared, torch::tensor(idx, torch::kInt64));
  }
  // A window of `segment` consecutive nodes (topological order keeps neighbours close) that
  // holds at least one configurable node, with K configurations.
  const Graph& g = item.raw;
  std::uniform_int_distribution<size_t> pick(0, g.config_node_ids.size() - 1);
  const int64_t centre = g.config_node_ids.empty() ? 0 : g.config_node_ids[pick(rng)];
  const int64_t start =
      std::clamp<int64_t>(centre - segment / 2, 0, std::max<int64_t>(0, g.num_nodes - segment));
  std::vector<int32_t> nodes;
  for (int64_t i = start; i < std::min(g.num_nodes, start + segment); ++i)
    nodes.push_back(static_cast<int32_t>(i));
  const Graph small = subsample_configs(g, k, rng());
  return model::prepare_graph(induced_subgraph(small, nodes), norm, prune_hops);
}

std::string resolve_loss(const std::string& loss, const std::string& model) {
  if (loss == "auto") return model == "tgraph" ? "hinge" : model == "ast-gcn" ? "mse" : "listmle";
  if (loss == "listmle" || loss == "hinge" || loss == "mse") return loss;
  throw UsageError(fmt::format("--loss: expected listmle, hinge, mse or auto, found '{}'", loss));
}

double validate(model::CostModel& m, const std::vector<model::PreparedGraph>& valid,
                const std::vector<AstSet>& valid_ast, const model::Normalizer& norm, int64_t chunk,
                int64_t hidden) {
  std::vector<double> taus;
  for (const auto& s : valid_ast)
    taus.push_back(score_ast(s, predict_ast(m, s, norm, chunk)).kendall_tau);
  for (const auto& g : valid) {
    const auto cost = predict_prepared(m, g, chunk, hidden);
    std::vector<double> truth(static_cast<size_t>(g.num_configs()));
    std::copy_n(g.targets.data_ptr<double>(), truth.size(), truth.begin());
    taus.push_back(g.collection == Collection::kLayout ? kendall_tau_b(cost, truth)
                                                       : -slowdown_at_k(cost, truth, 5));
  }
  return mean_ignoring_nan(taus);
}

}  // namespace

void train_model(const TrainOptions& o) {
  if (o.model == "xgb") {
    train_xgb(o);
    return;
  }
  if (o.out.empty()) throw UsageError("--out is required");
  if (o.epochs < 1 || o.configs_per_step < 2)
    throw UsageError("--epochs >= 1 and --configs >= 2 are required");
  set_threads(o.threads);
  torch::manual_seed(o.seed);
  std::mt19937_64 rng(o.seed);
  const Dataset ds(o.data);
  const auto& train_files = ds.files(Split::kTrain);
  if (train_files.empty())
    throw InputError(fmt::format("{}: no training graphs under train/", o.data));
  const std::string loss_name = resolve_loss(o.loss, o.model);
  const bool ast_data = is_ast_file(train_files.front());
  if (ast_data != (o.model == "ast-gcn")) {
    throw UsageError(ast_data ? fmt::format("{} holds syntax trees: train ast-gcn on it", o.data)
                              : fmt::format("ast-gcn reads syntax trees; {} holds graphs", o.data));
  }
  const std::string resume_path = o.out + ".resume";

  model::ModelOptions mo;
  mo.name = o.model;
  mo.hidden = o.hidden;
  mo.layers = o.layers;
  mo.prune_hops = o.prune_hops;
  mo.cross_attention = o.cross_attention;
  mo = mo.resolved();

  Checkpoint start;
  if (o.resume) {
    start = load_checkpoint(resume_path);
    if (start.meta.model.name != mo.name) {
      throw UsageError(fmt::format("{} holds a '{}' model, not '{}'", resume_path,
                                   start.meta.model.name, mo.name));
    }
    mo = start.meta.model;
  } else {
    start.normalizer =
        ast_data ? model::fit_ast_normalizer(train_files) : model::Normalizer::fit(train_files);
    start.model = model::make_model(mo,
                                    {start.normalizer.collection, start.normalizer.node_feat_width,
                                     start.normalizer.config_feat_width},
                                    start.normalizer);
  }
  const model::Normalizer& norm = start.normalizer;
  auto m = start.model;
  const int prune = m->prune_hops();
  const int64_t segment = m->segment_nodes();

  // Prepare every graph once: the config-independent tensors are shared by all steps.
  std::vector<TrainItem> items;
  {
    Progress progress("preparing", static_cast<int64_t>(train_files.size()));
    for (const auto& f : train_files) {
      TrainItem item;
      if (ast_data) {
        item.ast = std::make_shared<AstSet>(load_ast(f));
        items.push_back(std::move(item));
        progress.update(static_cast<int64_t>(items.size()));
        continue;
      }
      Graph g = load_graph(f);
      merge_duplicate_configs(g);  // duplicates carry no ranking signal
      if (segment > 0 && g.num_nodes > segment) {
        item.segmented = true;
        item.raw = std::move(g);
      } else {
        item.prepared = model::prepare_graph(g, norm, prune);
      }
      items.push_back(std::move(item));
      progress.update(static_cast<int64_t>(items.size()));
    }
  }
  std::vector<model::PreparedGraph> valid;
  std::vector<AstSet> valid_ast;
  for (const auto& f : ds.files(Split::kValid)) {
    if (ast_data) {
      AstSet s = load_ast(f);
      if (o.max_valid_configs > 0 && s.num_configs > o.max_valid_configs) {
        std::vector<int64_t> idx;
        for (int64_t c = 0; c < o.max_valid_configs; ++c) idx.push_back(c);
        s = select_ast_configs(s, idx);
      }
      valid_ast.push_back(std::move(s));
      continue;
    }
    Graph g = load_graph(f);
    if (o.max_valid_configs > 0) g = subsample_configs(g, o.max_valid_configs, 99);
    valid.push_back(model::prepare_graph(g, norm, prune));
  }

  torch::optim::AdamW opt(m->parameters(),
                          torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  CheckpointMeta meta = start.meta;
  meta.model = mo;
  meta.loss = loss_name;
  if (o.resume) {
    load_optimizer_state(resume_path, opt);
  } else {
    meta.epoch = 0;
    meta.step = 0;
    meta.best_valid_tau = -2;
    meta.epochs_since_best = 0;
  }
  const int64_t steps_per_epoch = static_cast<int64_t>(items.size());
  const int64_t total_steps = steps_per_epoch * o.epochs;
  const int64_t warmup_steps =
      std::max<int64_t>(1, static_cast<int64_t>(o.warmup * static_cast<double>(total_steps)));
  auto lr_at = [&](int64_t step) {
    if (step < warmup_steps)
      return o.lr * static_cast<double>(step + 1) / static_cast<double>(warmup_steps);
    const double p = static_cast<double>(step - warmup_steps) /
                     static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps));
    return o.lr * 0.5 * (1 + std::cos(M_PI * std::min(1.0, p)));
  };
  const std::string log_path = o.log.empty() ? o.out + ".log.jsonl" : o.log;
  std::ofstream log(log_path, o.resume ? std::ios::app : std::ios::trunc);
  if (!log) throw InputError(fmt::format("{}: cannot write the training log", log_path));
  if (!o.quiet) {
    fmt::print(
        "training {} ({} parameters) on {} graphs, validating on {}; loss {}; {} epochs\n", mo.name,
        [&] {
          int64_t n = 0;
          for (const auto& p : m->parameters()) n += p.numel();
          return n;
        }(),
        items.size(), valid.size(), loss_name, o.epochs);
  }
  const auto t_start = Clock::now();
  Progress progress("training", total_steps);
  const int first_epoch = meta.epoch;
  for (int epoch = meta.epoch; epoch < o.epochs; ++epoch) {
    // Reseeding per epoch makes a resumed run draw what an uninterrupted one would.
    rng.seed(o.seed * 1000003 + static_cast<uint64_t>(epoch));
    torch::manual_seed(o.seed * 1000003 + static_cast<uint64_t>(epoch));
    std::vector<size_t> order(items.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    m->train();
    double loss_sum = 0;
    const auto t_epoch = Clock::now();
    for (size_t i : order) {
      const auto& item = items[i];
      const int64_t nodes = item.ast         ? 1
                            : item.segmented ? std::min(segment, item.raw.num_nodes)
                                             : item.prepared.input.num_nodes;
      const int64_t k = std::max<int64_t>(
          2, configs_per_pass(o.configs_per_step, nodes, mo.hidden * 4, kTrainingBudget));
      const auto batch = sample_step(item, norm, prune, k, segment, rng);
      if (batch.num_configs() < 2) continue;
      const auto cost = m->forward(batch.input, batch.configs);
      torch::Tensor loss;
      if (loss_name == "listmle") {
        loss = listmle_loss(cost, batch.targets);
      } else if (loss_name == "hinge") {
        loss = hinge_loss(cost, batch.targets, o.margin);
      } else {
        loss = mse_loss(cost, batch.targets, norm.log_target_mean, norm.log_target_std);
      }
      for (auto& group : opt.param_groups()) {
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr_at(meta.step));
      }
      opt.zero_grad();
      loss.backward();
      torch::nn::utils::clip_grad_norm_(m->parameters(), o.clip);
      opt.step();
      ++meta.step;
      loss_sum += loss.item<double>();
      progress.update(
          meta.step,
          fmt::format("epoch {} loss {:.4f} best valid {}", epoch + 1, loss.item<double>(),
                      meta.best_valid_tau > -2 ? fmt::format("{:.4f}", meta.best_valid_tau) : "-"));
    }
    const double train_loss = loss_sum / static_cast<double>(std::max<size_t>(1, order.size()));
    const double valid_tau = valid.empty() && valid_ast.empty()
                                 ? -train_loss
                                 : validate(*m, valid, valid_ast, norm, o.eval_chunk, mo.hidden);
    meta.epoch = epoch + 1;
    meta.valid_tau = valid_tau;
    const bool improved = valid_tau > meta.best_valid_tau;
    if (improved) {
      meta.best_valid_tau = valid_tau;
      meta.epochs_since_best = 0;
      save_checkpoint(o.out, meta, norm, m, {}, nullptr);
    } else {
      ++meta.epochs_since_best;
    }
    save_checkpoint(resume_path, meta, norm, m, {}, &opt);
    const double elapsed = seconds_since(t_start);
    log << nlohmann::json{{"epoch", meta.epoch},
                          {"step", meta.step},
                          {"train_loss", train_loss},
                          {"valid_metric", valid_tau},
                          {"best", meta.best_valid_tau},
                          {"lr", lr_at(meta.step)},
                          {"epoch_seconds", seconds_since(t_epoch)},
                          {"seconds", elapsed}}
               .dump()
        << '\n';
    log.flush();
    if (!o.quiet) {
      progress.finish();
      fmt::print("epoch {:>3}/{}  loss {:.4f}  valid {} {:.4f}{}  {:.1f}s\n", meta.epoch, o.epochs,
                 train_loss, norm.collection != Collection::kTile ? "tau" : "-slowdown@5",
                 valid_tau, improved ? " *" : "", seconds_since(t_epoch));
      progress.resume();
    }
    if (o.stop_after > 0 && meta.epoch - first_epoch >= o.stop_after) {
      if (!o.quiet) fmt::print("stopping after {} epochs; continue with --resume\n", o.stop_after);
      break;
    }
    if ((!valid.empty() || !valid_ast.empty()) && meta.epochs_since_best >= o.patience) {
      if (!o.quiet) fmt::print("early stop: no validation gain for {} epochs\n", o.patience);
      break;
    }
  }
  progress.finish();
  if (!o.quiet) {
    fmt::print("best valid {:.4f}; checkpoint {} ({:.1f}s, peak RSS {:.0f} MiB)\n",
               meta.best_valid_tau, o.out, seconds_since(t_start), peak_rss_mib());
  }
}

namespace {

// Costs of every configuration in the file at `path` (a graph or a set of syntax trees) under
// the checkpoint's model; fills `score` when given.
std::vector<double> predict_file(const Checkpoint& ck, const std::string& path, int chunk,
                                 GraphScore* score) {
  if (is_ast_file(path)) {
    if (!ck.model || ck.normalizer.collection != Collection::kAst) {
      throw InputError(fmt::format("{}: syntax trees need an ast-gcn model", path));
    }
    const AstSet s = load_ast(path);
    auto cost = predict_ast(*ck.model, s, ck.normalizer, chunk);
    if (score != nullptr) *score = score_ast(s, cost);
    return cost;
  }
  const Graph g = load_graph(path);
  auto cost = ck.meta.model.name == "xgb"
                  ? xgb_predict(ck, g)
                  : predict_prepared(*ck.model,
                                     model::prepare_graph(g, ck.normalizer, ck.model->prune_hops()),
                                     chunk, ck.meta.model.hidden);
  if (score != nullptr) *score = score_graph(g, cost);
  return cost;
}

}  // namespace

std::vector<double> predict_costs(const std::string& model_path, const std::string& graph_path,
                                  int chunk) {
  return predict_file(load_checkpoint(model_path), graph_path, chunk, nullptr);
}

ScoreReport evaluate_model(const EvalOptions& o) {
  set_threads(o.threads);
  const Checkpoint ck = load_checkpoint(o.model);
  std::vector<std::string> files;
  std::error_code ec;
  if (std::filesystem::is_directory(std::filesystem::path(o.data) / o.split, ec)) {
    files = list_npz_files((std::filesystem::path(o.data) / o.split).string());
  } else {
    parse_split(o.split);
    files = list_npz_files(o.data);
  }
  if (files.empty())
    throw InputError(fmt::format("{}: no .npz files for split '{}'", o.data, o.split));
  std::vector<GraphScore> scores;
  Progress progress("evaluating", static_cast<int64_t>(files.size()));
  for (const auto& f : files) {
    GraphScore score;
    predict_file(ck, f, o.chunk, &score);
    scores.push_back(std::move(score));
    progress.update(static_cast<int64_t>(scores.size()));
  }
  return summarize_scores(std::move(scores));
}

}  // namespace tcost::train
