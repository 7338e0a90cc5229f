// Losses, the training loop, evaluation and prediction for the neural models.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/ast.h"
#include "core/blas.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/progress.h"
#include "core/prune.h"
#include "core/tpugraphs_io.h"
#include "model/tree_pass_cells.h"
#include "train/api.h"
#include "train/checkpoint.h"
#include "train/chunking.h"
#include "train/cost_model.h"
#include "train/distributed.h"
#include "train/losses.h"
#include "train/step.h"
#include "train/xgb.h"

namespace tcost::train {

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

// A training graph: prepared once (small graphs), or kept raw and cut into segments per step.
struct TrainItem {
  Graph raw;                      // kept only when segmenting
  model::PreparedGraph prepared;  // whole graph otherwise
  bool segmented = false;
  std::shared_ptr<AstSet> ast;  // syntax trees: batches are built per step
  bool fused = false;           // both views (tgraph-ast): `prepared` and the same configs' `ast`
};

// Under a data root holding both views, the syntax-tree file beside graph file `file`:
// ROOT/ast/SPLIT/NAME.npz for ROOT/layout/SPLIT/NAME.npz. InputError when there is none.
std::string twin_path(const std::string& file) {
  namespace fs = std::filesystem;
  const fs::path f(file);
  const fs::path twin = f.parent_path().parent_path().parent_path() / "ast" /
                        f.parent_path().filename() / f.filename();
  if (!fs::is_regular_file(twin))
    throw InputError(fmt::format("{}: no syntax trees beside it at {}", file, twin.string()));
  return twin.string();
}

// The syntax trees beside graph file `file` (twin_path), holding graph g's configurations.
// InputError when they are missing or not g's configurations (load_trees_of).
AstSet twin_trees(const std::string& file, const Graph& g) {
  return load_trees_of(g, file, twin_path(file));
}

// Configurations 0 .. n-1.
std::vector<int64_t> first_configs(int64_t n) {
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  return idx;
}

// k of configurations 0 .. c-1 at random (all of them when k >= c), in a random order.
std::vector<int64_t> sampled_configs(int64_t c, int64_t k, std::mt19937_64& rng) {
  std::vector<int64_t> idx = first_configs(c);
  std::shuffle(idx.begin(), idx.end(), rng);
  idx.resize(static_cast<size_t>(std::min(k, c)));
  return idx;
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
  if (item.fused) {
    return model::select_views(item.prepared, *item.ast,
                               sampled_configs(item.prepared.num_configs(), k, rng), norm);
  }
  if (item.ast)
    return model::prepare_ast_batch(*item.ast, sampled_configs(item.ast->num_configs, k, rng),
                                    norm);
  if (!item.segmented) {
    return model::select_configs(
        item.prepared,
        torch::tensor(sampled_configs(item.prepared.num_configs(), k, rng), torch::kInt64));
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

// The validation metric over this rank's share of the validation graphs (every graph when
// `pg` is null): graph j belongs to rank j % W. The NaN-skipping sum and count are reduced so
// that every rank sees the same mean.
// valid_trees: for a model reading both views, the syntax trees of each of `valid` (else empty).
double validate(model::Network& m, const std::vector<model::PreparedGraph>& valid,
                const std::vector<AstSet>& valid_ast, const std::vector<AstSet>& valid_trees,
                const model::Normalizer& norm, int64_t chunk, int64_t hidden, ProcessGroup* pg) {
  const size_t world = pg ? static_cast<size_t>(pg->world()) : 1;
  const size_t rank = pg ? static_cast<size_t>(pg->rank()) : 0;
  std::vector<double> taus;
  size_t j = 0;
  for (const auto& s : valid_ast) {
    if (j++ % world == rank)
      taus.push_back(score_ast(s, predict_ast(m, s, norm, chunk)).kendall_tau);
  }
  for (size_t v = 0; v < valid.size(); ++v) {
    const auto& g = valid[v];
    if (j++ % world != rank) continue;
    const auto cost = valid_trees.empty()
                          ? predict_prepared(m, g, chunk, hidden)
                          : predict_prepared(m, g, chunk, hidden, &valid_trees[v], &norm);
    std::vector<double> truth(static_cast<size_t>(g.num_configs()));
    std::copy_n(g.targets.data_ptr<double>(), truth.size(), truth.begin());
    taus.push_back(g.collection == Collection::kLayout ? kendall_tau_b(cost, truth)
                                                       : -slowdown_at_k(cost, truth, 5));
  }
  if (pg == nullptr) return mean_ignoring_nan(taus);
  double sum = 0, n = 0;
  for (double t : taus) {
    if (!std::isnan(t)) {
      sum += t;
      n += 1;
    }
  }
  const auto total = pg->allreduce_sum({sum, n});
  return total[1] > 0 ? total[0] / total[1] : std::nan("");
}

// What training runs on: the prepared training items and the validation graphs.
struct TrainingData {
  std::vector<TrainItem> items;
  std::vector<model::PreparedGraph> valid;
  std::vector<AstSet> valid_ast;
  std::vector<AstSet> valid_trees;  // both views: the syntax trees of each of `valid`
};

// Prepares every training graph once (the config-independent tensors are shared by all
// steps), each cut to max_train_configs configurations at random (a draw per file, in file
// order, from the training seed), and every validation graph (subsampled to
// max_valid_configs).
TrainingData load_training_data(const std::vector<std::string>& train_files,
                                const std::vector<std::string>& valid_files, const TrainOptions& o,
                                bool ast_data, const model::Normalizer& norm, int prune,
                                int64_t segment) {
  TrainingData d;
  Progress progress("preparing", static_cast<int64_t>(train_files.size()));
  std::mt19937_64 cut_rng(o.seed * 0x9e3779b97f4a7c15ull + 0x7472);
  // The configurations of a training file that it keeps: all, or max_train_configs at random.
  const auto kept = [&](int64_t c) {
    std::vector<int64_t> idx = sampled_configs(c, o.max_train_configs, cut_rng);
    std::sort(idx.begin(), idx.end());
    return idx;
  };
  const auto cut = [&](int64_t c) { return o.max_train_configs > 0 && c > o.max_train_configs; };
  for (const auto& f : train_files) {
    TrainItem item;
    if (ast_data) {
      AstSet s = load_ast(f);
      if (cut(s.num_configs)) s = select_ast_configs(s, kept(s.num_configs));
      item.ast = std::make_shared<AstSet>(std::move(s));
    } else if (norm.trees) {
      // Both views: configurations kept as they are (not merged), so that they stay the trees'.
      Graph g = load_graph(f);
      AstSet s = twin_trees(f, g);
      if (cut(g.num_configs)) {
        const std::vector<int64_t> idx = kept(g.num_configs);
        s = select_ast_configs(s, idx);
        g = select_configs(g, idx);
      }
      item.ast = std::make_shared<AstSet>(std::move(s));
      item.fused = true;
      item.prepared = model::prepare_graph(g, norm, prune);
    } else {
      Graph g = load_graph(f);
      if (cut(g.num_configs)) g = select_configs(g, kept(g.num_configs));
      merge_duplicate_configs(g);  // duplicates carry no ranking signal
      if (segment > 0 && g.num_nodes > segment) {
        item.segmented = true;
        item.raw = std::move(g);
      } else {
        item.prepared = model::prepare_graph(g, norm, prune);
      }
    }
    d.items.push_back(std::move(item));
    progress.update(static_cast<int64_t>(d.items.size()));
  }
  progress.finish();
  for (const auto& f : valid_files) {
    if (ast_data) {
      d.valid_ast.push_back(first_ast_configs(load_ast(f), o.max_valid_configs));
      continue;
    }
    Graph g = load_graph(f);
    if (norm.trees) {
      // Both views: the first max_valid_configs configurations of each (as for syntax trees).
      AstSet s = twin_trees(f, g);
      model::PreparedGraph p = model::prepare_graph(g, norm, prune);
      if (o.max_valid_configs > 0 && s.num_configs > o.max_valid_configs) {
        const std::vector<int64_t> idx = first_configs(o.max_valid_configs);
        s = select_ast_configs(s, idx);
        p = model::select_configs(p, torch::tensor(idx, torch::kInt64));
      }
      d.valid.push_back(std::move(p));
      d.valid_trees.push_back(std::move(s));
      continue;
    }
    if (o.max_valid_configs > 0) g = subsample_configs(g, o.max_valid_configs, 99);
    d.valid.push_back(model::prepare_graph(g, norm, prune));
  }
  return d;
}

// --init: copies into `ck`'s fresh model every parameter and buffer of the model in `path` (a
// checkpoint of the same kind) that has the same name and shape; the rest, such as input
// layers of other feature widths, keep their fresh initialisation. The normaliser stays the
// one fitted on this training data. This is how a model pretrained on other data (synthetic
// graphs) is fine-tuned.
void start_from(const std::string& path, Checkpoint& ck, bool quiet) {
  const Checkpoint pre = load_checkpoint(path);
  if (!pre.model) throw UsageError(fmt::format("--init {}: holds no neural model", path));
  if (pre.meta.model.name != ck.meta.model.name) {
    throw UsageError(fmt::format("--init {}: holds a '{}' model, not '{}'", path,
                                 pre.meta.model.name, ck.meta.model.name));
  }
  torch::NoGradGuard no_grad;
  int64_t copied = 0, total = 0;
  std::vector<std::string> fresh;
  const auto copy = [&](const torch::OrderedDict<std::string, torch::Tensor>& from,
                        torch::OrderedDict<std::string, torch::Tensor> to) {
    for (auto& item : to) {
      ++total;
      const torch::Tensor* src = from.find(item.key());
      if (src != nullptr && src->sizes() == item.value().sizes()) {
        item.value().copy_(*src);
        ++copied;
      } else {
        fresh.push_back(item.key());
      }
    }
  };
  copy(pre.model->named_parameters(), ck.model->named_parameters());
  copy(pre.model->named_buffers(), ck.model->named_buffers());
  if (copied == 0) {
    throw UsageError(fmt::format(
        "--init {}: no parameter has the name and shape of this model's (other --hidden?)", path));
  }
  if (!quiet) {
    fmt::print("--init {}: {} of {} tensors copied; fresh: {}\n", path, copied, total,
               fresh.empty() ? std::string("none") : fmt::format("{}", fmt::join(fresh, ", ")));
  }
}

// A fresh model (normaliser fitted on the training split) or the state of OUT.resume.
Checkpoint start_or_resume(const TrainOptions& o, const std::vector<std::string>& train_files,
                           bool ast_data, const std::string& resume_path) {
  model::ModelOptions mo;
  mo.name = o.model;
  mo.hidden = o.hidden;
  mo.layers = o.layers;
  mo.prune_hops = o.prune_hops;
  mo.cross_attention = o.cross_attention;
  mo.config_pool = o.config_pool;
  mo.tree_attention = o.tree_attention && o.model == "ast-gcn";
  mo.work_pool = resolve_work_pool(o.work_pool, o.model);
  mo.dropout = o.dropout;
  mo.tree_passes = resolve_tree_passes(o.tree_passes, o.model);
  mo.tree_pass_cell = o.tree_pass_cell;
  mo.tree_pass_whole = o.tree_pass_whole;
  mo.hand_features = o.hand_features;
  mo.tree_skip = o.tree_skip;
  mo = mo.resolved();
  if (o.resume) {
    Checkpoint ck = load_checkpoint(resume_path);
    if (ck.meta.model.name != mo.name) {
      throw UsageError(
          fmt::format("{} holds a '{}' model, not '{}'", resume_path, ck.meta.model.name, mo.name));
    }
    return ck;
  }
  Checkpoint ck;
  ck.meta.model = mo;
  ck.normalizer = ast_data ? model::fit_ast_normalizer(train_files, mo.hand_features)
                           : model::Normalizer::fit(train_files);
  if (mo.name == "tgraph-ast") {
    std::vector<std::string> tree_files;
    for (const auto& f : train_files) tree_files.push_back(twin_path(f));
    ck.normalizer.trees = std::make_shared<const model::Normalizer>(
        model::fit_ast_normalizer(tree_files, mo.hand_features));
  }
  ck.model = model::make_model(mo, model::dims_of(ck.normalizer), ck.normalizer);
  if (!o.init.empty()) start_from(o.init, ck, o.quiet);
  return ck;
}

// The mean of a network's weights over several epochs (--average-last): parameters averaged
// with equal weights, buffers taken from the last epoch added.
struct WeightAverage {
  std::shared_ptr<model::Network> net;  // null: not averaging (or not rank 0)
  int count = 0;
  void resume_from(const std::string& path, int averaged) {
    const Checkpoint ck = load_checkpoint(path);
    if (ck.meta.averaged_epochs != averaged) {
      throw InputError(fmt::format(
          "{}: holds the mean of {} epochs, the resume state expects {}; train again without "
          "--resume",
          path, ck.meta.averaged_epochs, averaged));
    }
    copy_from(*ck.model, true);
    count = averaged;
  }
  // Adds the network's current weights; returns how many epochs the mean now holds.
  int add(model::Network& m) {
    ++count;
    copy_from(m, count == 1);
    return count;
  }

 private:
  void copy_from(model::Network& m, bool replace) {
    torch::NoGradGuard no_grad;
    const auto from = m.named_parameters();
    auto to = net->named_parameters();
    for (const auto& p : from) {
      torch::Tensor& dst = to[p.key()];
      if (replace) {
        dst.copy_(p.value());
      } else {
        dst.add_(p.value() - dst, 1.0 / count);
      }
    }
    auto dst_buffers = net->named_buffers();
    for (const auto& b : m.named_buffers()) dst_buffers[b.key()].copy_(b.value());
  }
};

// Warm-up then cosine decay of the learning rate over `total` steps.
// With `hold` set (--average-last), the rate reached at step `hold` stays from there on: the
// epochs whose weights are averaged train at one rate (stochastic weight averaging).
struct LrSchedule {
  double lr;
  int64_t warmup, total;
  int64_t hold = -1;
  double at(int64_t step) const {
    if (hold >= 0 && step > hold) step = hold;
    if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
    const double p = static_cast<double>(step - warmup) /
                     static_cast<double>(std::max<int64_t>(1, total - warmup));
    return lr * 0.5 * (1 + std::cos(M_PI * std::min(1.0, p)));
  }
};

// A seed for graph `item` of epoch `epoch`: the graph's configurations and any randomness of
// its forward pass do not depend on which rank takes it, so W processes draw what one does.
uint64_t item_seed(uint64_t seed, int epoch, size_t item) {
  uint64_t x = seed * 1000003 + static_cast<uint64_t>(epoch) * 0x9E3779B97F4A7C15ull +
               static_cast<uint64_t>(item) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  return x * 0x94D049BB133111EBull;
}

// Sums of the epoch's losses and graphs (over every rank).
struct EpochLoss {
  double sum = 0;
  double graphs = 0;
};

// One epoch over the items in a seeded order (reseeded per epoch, so that a resumed run draws
// what an uninterrupted one would). Each optimiser step takes the next --batch-graphs graphs
// of that order, rank r the r-th contiguous share of them; the gradients (each graph's loss
// scaled by 1/graphs) and the loss sums are all-reduced once per step.
EpochLoss run_epoch(int epoch, const TrainOptions& o, const TrainingData& d, model::Network& m,
                    torch::optim::Optimizer& opt, const model::Normalizer& norm,
                    const StepOptions& step_options, const LrSchedule& lr, int64_t hidden,
                    CheckpointMeta& meta, Progress* progress, ProcessGroup* pg) {
  std::mt19937_64 rng(o.seed * 1000003 + static_cast<uint64_t>(epoch));
  std::vector<size_t> order(d.items.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const int prune = m.prune_hops();
  const int64_t segment = m.segment_nodes();
  const size_t world = pg ? static_cast<size_t>(pg->world()) : 1;
  const size_t rank = pg ? static_cast<size_t>(pg->rank()) : 0;
  const size_t per_step = static_cast<size_t>(o.batch_graphs);
  const size_t share = per_step / world;
  std::vector<torch::Tensor> params = m.parameters();
  EpochLoss total;
  for (size_t begin = 0; begin < order.size(); begin += per_step) {
    const size_t end = std::min(order.size(), begin + per_step);
    const double scale = 1.0 / static_cast<double>(end - begin);
    opt.zero_grad();
    StepOptions so = step_options;
    so.lr = lr.at(meta.step);
    double loss_sum = 0, graphs = 0;
    for (size_t pos = begin + rank * share; pos < std::min(end, begin + (rank + 1) * share);
         ++pos) {
      const size_t i = order[pos];
      const auto& item = d.items[i];
      std::mt19937_64 graph_rng(item_seed(o.seed, epoch, i));
      torch::manual_seed(item_seed(o.seed, epoch, i));
      const int64_t nodes = item.ast && !item.fused ? 1
                            : item.segmented        ? std::min(segment, item.raw.num_nodes)
                                                    : item.prepared.input.num_nodes;
      const int64_t k = std::max<int64_t>(
          2, configs_per_pass(o.configs_per_step, nodes, hidden * 4, kTrainingBudget));
      const auto batch = sample_step(item, norm, prune, k, segment, graph_rng);
      if (batch.num_configs() < 2) continue;
      loss_sum += accumulate_gradients(m, batch, norm, so, scale);
      graphs += 1;
    }
    if (pg != nullptr) {
      // Every parameter takes part, with zeros where this rank's graphs left no gradient.
      std::vector<torch::Tensor> grads;
      for (auto& p : params) {
        if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
        grads.push_back(p.grad());
      }
      auto sums = torch::tensor({loss_sum, graphs}, torch::kFloat64);
      grads.push_back(sums);
      pg->allreduce_sum(grads);
      loss_sum = sums[0].item<double>();
      graphs = sums[1].item<double>();
    }
    if (graphs == 0) continue;  // every graph of the step had fewer than 2 configurations
    apply_gradients(m, opt, so);
    ++meta.step;
    total.sum += loss_sum;
    total.graphs += graphs;
    if (progress != nullptr) {
      progress->update(
          meta.step,
          fmt::format("epoch {} loss {:.4f} best valid {}", epoch + 1, loss_sum / graphs,
                      meta.best_valid_tau > -2 ? fmt::format("{:.4f}", meta.best_valid_tau) : "-"));
    }
  }
  return total;
}

// Rank 0's file at `path` on every rank: the others get its bytes through the group and read
// them from a private copy (they need not share rank 0's file system).
std::string shared_file(const std::string& path, ProcessGroup* pg) {
  if (pg == nullptr) return path;
  std::string bytes;
  if (pg->rank() == 0) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot read", path));
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes = pg->broadcast_bytes(bytes);
  if (pg->rank() == 0) return path;
  const std::string copy = fmt::format("{}.rank{}", path, pg->rank());
  std::ofstream out(copy, std::ios::binary | std::ios::trunc);
  if (!out || !out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())))
    throw InputError(fmt::format("{}: cannot write", copy));
  return copy;
}

// The options that only some models have, refused for the others (xgb included: it never
// reaches start_or_resume, where the network options are built).
void check_model_options(const TrainOptions& o) {
  const bool reads_trees = o.model == "ast-gcn" || o.model == "tgraph-ast";
  if (!(o.dropout >= 0 && o.dropout < 1))
    throw UsageError(fmt::format("--dropout {} is not a probability in [0, 1)", o.dropout));
  if (o.dropout > 0 && !reads_trees)
    throw UsageError(
        fmt::format("--dropout is an ast-gcn and tgraph-ast option, not {}'s", o.model));
  if (o.work_pool == 1 && !reads_trees)
    throw UsageError(fmt::format("--work-pool reads syntax trees: not a {} option", o.model));
  if (o.tree_passes == 1 && !reads_trees)
    throw UsageError(fmt::format("--tree-passes reads syntax trees: not a {} option", o.model));
  if (!model::is_tree_pass_cell(o.tree_pass_cell))
    throw UsageError(fmt::format("--tree-pass-cell {}: one of {}", o.tree_pass_cell,
                                 fmt::join(model::tree_pass_cells(), ", ")));
  const bool passes = resolve_tree_passes(o.tree_passes, o.model);
  if (o.tree_pass_cell != "relu" && !passes)
    throw UsageError(
        fmt::format("--tree-pass-cell is the cell of the tree passes, which {} "
                    "does not make here (--tree-passes)",
                    o.model));
  if (o.tree_pass_whole && !passes)
    throw UsageError(
        fmt::format("--tree-pass-whole orders the tree passes, which {} does not make here "
                    "(--tree-passes)",
                    o.model));
  if (o.hand_features && !reads_trees)
    throw UsageError(
        fmt::format("--hand-features: the syntax-tree models' head reads them, not {}'s", o.model));
  if (o.tree_skip && o.model != "tgraph-ast")
    throw UsageError(fmt::format("--tree-skip is a tgraph-ast option, not {}'s", o.model));
  if (o.config_pool && o.model != "tgraph")
    throw UsageError(fmt::format("--config-pool is a tgraph option, not {}'s", o.model));
}

}  // namespace

void set_threads(int threads) {
  if (threads <= 0) return;
  torch::set_num_threads(threads);
  set_blas_threads(threads);
}

void train_model(const TrainOptions& options) {
  TrainOptions o = options;
  o.epochs = resolve_epochs(o.epochs, o.model);
  o.lr = resolve_lr(o.lr, o.model);
  const DistEnv env = dist_env_from_environment();
  check_model_options(o);
  if (o.model == "xgb") {
    if (o.include_valid)
      throw UsageError(
          "--include-valid: xgb chooses its boosting rounds on valid/; train it with them");
    if (!o.init.empty())
      throw UsageError("--init starts a neural model from another's weights; xgb has none");
    if (o.average_last > 0)
      throw UsageError("--average-last averages a neural model's weights; xgb has none");
    if (o.max_train_configs > 0)
      throw UsageError(
          "--train-configs cuts the neural models' training graphs; not an xgb option");
    if (env.world > 1) {
      throw UsageError(
          "xgb does not train distributed: Debian's XGBoost has no tracker to start its own "
          "collective mode with; train it in one process (unset WORLD_SIZE)");
    }
    train_xgb(o);
    return;
  }
  if (o.out.empty()) throw UsageError("--out is required");
  if (o.epochs < 1 || o.configs_per_step < 2)
    throw UsageError("--epochs >= 1 and --configs >= 2 are required");
  if (o.average_last > o.epochs) {
    throw UsageError(
        fmt::format("--average-last {} is more than the {} epochs", o.average_last, o.epochs));
  }
  if (o.batch_graphs < 1 || o.batch_graphs % env.world != 0) {
    throw UsageError(fmt::format("--batch-graphs {} must be a positive multiple of WORLD_SIZE {}",
                                 o.batch_graphs, env.world));
  }
  set_threads(o.threads);
  torch::manual_seed(o.seed);
  // A model reading both views trains on ROOT/layout, each graph with its twin in ROOT/ast.
  const bool fused = o.model == "tgraph-ast";
  if (fused && !std::filesystem::is_directory(std::filesystem::path(o.data) / "ast")) {
    throw UsageError(fmt::format(
        "tgraph-ast reads layout graphs and syntax trees side by side: {} has no ast/", o.data));
  }
  const Dataset ds(fused ? (std::filesystem::path(o.data) / "layout").string() : o.data);
  // --include-valid: the validation graphs join the training graphs, and nothing is validated.
  std::vector<std::string> train_files = ds.files(Split::kTrain);
  std::vector<std::string> valid_files = ds.files(Split::kValid);
  if (o.include_valid) {
    train_files.insert(train_files.end(), valid_files.begin(), valid_files.end());
    valid_files.clear();
  }
  if (train_files.empty())
    throw InputError(fmt::format("{}: no training graphs under train/", o.data));
  // Checked before any data is loaded or any file of OUT is written.
  if (o.average_last > 0 && !valid_files.empty()) {
    throw UsageError(
        "--average-last averages the last epochs of a run without validation; with validation "
        "the best epoch is kept (add --include-valid)");
  }
  const std::string loss_name = resolve_loss(o.loss, o.model);
  const bool ast_data = is_ast_file(train_files.front());
  if (ast_data != (o.model == "ast-gcn")) {
    throw UsageError(ast_data
                         ? fmt::format("{} holds syntax trees: train ast-gcn or xgb on it", o.data)
                         : fmt::format("ast-gcn reads syntax trees; {} holds graphs", o.data));
  }
  std::unique_ptr<ProcessGroup> group;
  if (env.world > 1) {
    group = std::make_unique<ProcessGroup>(
        env, std::chrono::milliseconds(static_cast<int64_t>(o.dist_timeout_s * 1000)));
  }
  ProcessGroup* pg = group.get();
  const bool leader = env.rank == 0;
  const bool quiet = o.quiet || !leader;
  const std::string resume_path = o.out + ".resume";
  // Every rank resumes from rank 0's state (sent through the group).
  const std::string resume_from = o.resume ? shared_file(resume_path, pg) : resume_path;
  const Checkpoint start = start_or_resume(o, train_files, ast_data, resume_from);
  const model::ModelOptions mo = start.meta.model;
  const model::Normalizer& norm = start.normalizer;
  auto m = start.model;
  if (pg != nullptr) {
    // The same starting weights everywhere (rank 0's), whatever each rank's initialisation did.
    std::vector<torch::Tensor> state = m->parameters();
    for (auto& b : m->buffers()) state.push_back(b);
    pg->broadcast(state);
  }
  const TrainingData data = load_training_data(train_files, valid_files, o, ast_data, norm,
                                               m->prune_hops(), m->segment_nodes());

  torch::optim::AdamW opt(m->parameters(),
                          torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay));
  CheckpointMeta meta = start.meta;
  meta.loss = loss_name;
  if (o.resume) {
    load_optimizer_state(resume_from, opt);
    if (resume_from != resume_path) std::filesystem::remove(resume_from);
  } else {
    meta.epoch = 0;
    meta.step = 0;
    meta.best_valid_tau = -2;
    meta.epochs_since_best = 0;
    meta.averaged_epochs = 0;
  }
  const int64_t steps_per_epoch =
      (static_cast<int64_t>(data.items.size()) + o.batch_graphs - 1) / o.batch_graphs;
  const int64_t total_steps = steps_per_epoch * o.epochs;
  const LrSchedule lr{
      o.lr, std::max<int64_t>(1, static_cast<int64_t>(o.warmup * static_cast<double>(total_steps))),
      total_steps, o.average_last > 0 ? steps_per_epoch * (o.epochs - o.average_last) : -1};
  StepOptions step_options;
  step_options.loss = loss_name;
  step_options.margin = o.margin;
  step_options.clip = o.clip;
  const std::string log_path = o.log.empty() ? o.out + ".log.jsonl" : o.log;
  std::ofstream log;
  if (leader) {
    log.open(log_path, o.resume ? std::ios::app : std::ios::trunc);
    if (!log) throw InputError(fmt::format("{}: cannot write the training log", log_path));
  }
  const bool has_valid = !data.valid.empty() || !data.valid_ast.empty();
  // --average-last: the running mean of the window's epochs, which OUT holds; a resumed run
  // reads it back from OUT.
  WeightAverage average;
  if (o.average_last > 0 && leader) {
    average.net = model::make_model(mo, model::dims_of(norm), norm);
    if (o.resume && meta.averaged_epochs > 0) average.resume_from(o.out, meta.averaged_epochs);
  }
  if (!quiet) {
    int64_t parameters = 0;
    for (const auto& p : m->parameters()) parameters += p.numel();
    fmt::print(
        "training {} ({} parameters) on {} graphs{}, {}; loss {}; {} epochs; {} graph{} per "
        "step{}\n",
        mo.name, parameters, data.items.size(),
        o.include_valid ? " (train/ and valid/, --include-valid)" : "",
        has_valid ? fmt::format("validating on {}", data.valid.size() + data.valid_ast.size())
                  : std::string("no validation (the last epoch is kept)"),
        loss_name, o.epochs, o.batch_graphs, o.batch_graphs > 1 ? "s" : "",
        pg ? fmt::format(" over {} processes (c10d, Gloo)", env.world) : "");
  }
  const auto t_start = Clock::now();
  Progress progress("training", total_steps);
  const int first_epoch = meta.epoch;
  const int64_t first_step = meta.step;
  for (int epoch = meta.epoch; epoch < o.epochs; ++epoch) {
    const auto t_epoch = Clock::now();
    const EpochLoss el = run_epoch(epoch, o, data, *m, opt, norm, step_options, lr, mo.hidden, meta,
                                   leader ? &progress : nullptr, pg);
    const double train_loss = el.sum / std::max(1.0, el.graphs);
    // Without validation graphs (--include-valid, or a dataset without valid/) nothing chooses
    // among the epochs: the metric is the checkpoint's "none" (-2) and every epoch replaces the
    // checkpoint, so the last one is kept.
    const double valid_tau = has_valid ? validate(*m, data.valid, data.valid_ast, data.valid_trees,
                                                  norm, o.eval_chunk, mo.hidden, pg)
                                       : -2;
    // Checkpointing (rank 0): the best model at OUT, the resumable state at OUT.resume.
    meta.epoch = epoch + 1;
    meta.valid_tau = valid_tau;
    const bool improved = !has_valid || valid_tau > meta.best_valid_tau;
    const bool averaging = average.net && meta.epoch > o.epochs - o.average_last;
    if (averaging) meta.averaged_epochs = average.add(*m);
    if (improved) {
      meta.best_valid_tau = valid_tau;
      meta.epochs_since_best = 0;
      if (leader) save_checkpoint(o.out, meta, norm, averaging ? average.net : m, {}, nullptr);
    } else {
      ++meta.epochs_since_best;
    }
    if (leader) {
      save_checkpoint(resume_path, meta, norm, m, {}, &opt);
      nlohmann::json rec = {{"epoch", meta.epoch},
                            {"step", meta.step},
                            {"train_loss", train_loss},
                            {"lr", lr.at(meta.step)},
                            {"epoch_seconds", seconds_since(t_epoch)},
                            {"seconds", seconds_since(t_start)}};
      if (has_valid) {
        rec["valid_metric"] = valid_tau;
        rec["best"] = meta.best_valid_tau;
      }
      if (pg != nullptr) {
        rec["world_size"] = env.world;
        rec["allreduce_seconds"] = pg->allreduce_seconds();
      }
      log << rec.dump() << '\n';
      log.flush();
    }
    if (!quiet) {
      progress.finish();
      if (has_valid) {
        fmt::print("epoch {:>3}/{}  loss {:.4f}  valid {} {:.4f}{}  {:.1f}s\n", meta.epoch,
                   o.epochs, train_loss,
                   norm.collection != Collection::kTile ? "tau" : "-slowdown@5", valid_tau,
                   improved ? " *" : "", seconds_since(t_epoch));
      } else {
        fmt::print("epoch {:>3}/{}  loss {:.4f}  {:.1f}s\n", meta.epoch, o.epochs, train_loss,
                   seconds_since(t_epoch));
      }
      progress.resume();
    }
    // Stopping: after --stop-after epochs of this run, or without validation gain (every rank
    // sees the same validation metric, so all stop together).
    if (o.stop_after > 0 && meta.epoch - first_epoch >= o.stop_after) {
      if (!quiet) fmt::print("stopping after {} epochs; continue with --resume\n", o.stop_after);
      break;
    }
    if (has_valid && meta.epochs_since_best >= o.patience) {
      if (!quiet) fmt::print("early stop: no validation gain for {} epochs\n", o.patience);
      break;
    }
  }
  progress.finish();
  const double seconds = seconds_since(t_start);
  const int64_t steps = meta.step - first_step;
  if (pg != nullptr) pg->barrier();  // rank 0's files are written before anyone reports done
  if (!o.quiet) {
    const std::string comm =
        pg ? fmt::format(", all-reduce {:.2f} ms/step",
                         1e3 * pg->allreduce_seconds() / std::max<int64_t>(1, steps))
           : "";
    if (leader) {
      const std::string kept = meta.averaged_epochs > 0
                                   ? fmt::format("no validation: the mean of epochs {}-{} kept",
                                                 meta.epoch - meta.averaged_epochs + 1, meta.epoch)
                                   : fmt::format("no validation: epoch {} kept", meta.epoch);
      fmt::print("{}; checkpoint {} ({:.1f}s, {:.1f} steps/s{}, peak RSS {:.0f} MiB)\n",
                 has_valid ? fmt::format("best valid {:.4f}", meta.best_valid_tau) : kept, o.out,
                 seconds, static_cast<double>(steps) / seconds, comm, peak_rss_mib());
    } else {
      fmt::print("rank {}: {:.1f} steps/s{}, peak RSS {:.0f} MiB\n", env.rank,
                 static_cast<double>(steps) / seconds, comm, peak_rss_mib());
    }
  }
}

std::vector<double> predict_costs(const std::string& model_path, const std::string& graph_path) {
  auto m = load_cost_model(model_path);
  return is_ast_file(graph_path) ? m->score(load_ast(graph_path))
                                 : m->score(load_graph(graph_path));
}

ScoreReport evaluate_model(const EvalOptions& o) {
  const auto m = load_cost_model(o.model, o.threads);
  return evaluate_cost_model(*m, o.data, o.split);
}

ScoreReport evaluate_cost_model(CostModel& model, const std::string& data,
                                const std::string& split) {
  namespace fs = std::filesystem;
  const std::vector<Collection> views = model.collections();
  const fs::path root(data);
  std::error_code ec;
  fs::path split_dir = root / split;
  if (views.size() > 1 || !fs::is_directory(split_dir, ec)) {
    const fs::path own = root / collection_name(views.front()) / split;
    if (views.size() > 1 && !fs::is_directory(own, ec)) {
      throw InputError(fmt::format("{}: the {} model reads {} and {} side by side: expected {}",
                                   data, model.name(), collection_name(views[0]),
                                   collection_name(views[1]), own.string()));
    }
    split_dir = fs::is_directory(own, ec) ? own : fs::path();
  }
  std::vector<std::string> files;
  if (!split_dir.empty()) {
    files = list_npz_files(split_dir.string());
  } else {
    parse_split(split);
    files = list_npz_files(data);
  }
  if (files.empty()) throw InputError(fmt::format("{}: no .npz files for split '{}'", data, split));
  std::vector<GraphScore> scores;
  Progress progress("evaluating", static_cast<int64_t>(files.size()));
  for (const auto& f : files) {
    if (views.size() > 1) {
      const Graph g = load_graph(f);
      const AstSet s = twin_trees(f, g);  // views[1] is the syntax trees (collections())
      scores.push_back(score_graph(g, model.score(Views{&g, &s})));
    } else if (is_ast_file(f)) {
      const AstSet s = load_ast(f);
      scores.push_back(score_ast(s, model.score(s)));
    } else {
      const Graph g = load_graph(f);
      scores.push_back(score_graph(g, model.score(g)));
    }
    progress.update(static_cast<int64_t>(scores.size()));
  }
  return summarize_scores(std::move(scores));
}

}  // namespace tcost::train
