// tcost train / eval / rank / ensemble: thin wrappers over the training layer (train/api.h).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <numeric>

#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/report.h"
#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/submission.h"
#include "core/tpugraphs_io.h"
#include "model/tree_pass_cells.h"
#include "train/api.h"
#include "train/cost_model.h"

namespace tcost::cli {
namespace {

// Two flags on one tri-state option (-1 = the model's default): --NAME sets it to 1, --no-NAME
// to 0. CLI11 counts a flag bound to an integer, so each flag sets the value itself. `value`
// must outlive the app (a field of options a subcommand's callback holds).
void add_on_off_flags(CLI::App* cmd, const std::string& name, int& value,
                      const std::string& on_help, const std::string& off_help) {
  int* v = &value;
  cmd->add_flag_callback(
      "--" + name, [v] { *v = 1; }, on_help);
  cmd->add_flag_callback(
      "--no-" + name, [v] { *v = 0; }, off_help);
}

struct RankOptions {
  std::string model;
  std::string graph;  // a .npz file or a directory of them
  // The syntax trees of the same programs, for models that read both views (tgraph-ast, an
  // ensemble with ast-gcn): a file when graph is one, else a directory of files named as its.
  std::string ast;
  int64_t top = 0;  // 0 = all
  std::string csv;  // write the competition CSV here
};

// Costs of the configurations of the file f: from its own view, or, with --ast, from the layout
// graph f together with its syntax trees (InputError when they are not the same configurations).
std::vector<double> rank_costs(train::CostModel& model, const std::string& f,
                               const RankOptions& o) {
  namespace fs = std::filesystem;
  if (o.ast.empty()) return is_ast_file(f) ? model.score(load_ast(f)) : model.score(load_graph(f));
  if (is_ast_file(f))
    throw UsageError(
        fmt::format("--ast: {} holds syntax trees already; --graph takes the layout "
                    "graphs the trees belong to",
                    f));
  const std::string trees =
      fs::is_directory(o.ast) ? (fs::path(o.ast) / fs::path(f).filename()).string() : o.ast;
  const Graph g = load_graph(f);
  const AstSet s = load_trees_of(g, f, trees);
  return model.score(train::Views{&g, &s});
}

void run_rank(const RankOptions& o) {
  namespace fs = std::filesystem;
  if (!o.ast.empty() && fs::is_directory(o.graph) && !fs::is_directory(o.ast))
    throw UsageError("--ast: a directory of syntax-tree files when --graph is a directory");
  std::vector<SubmissionRow> rows;
  const auto model = train::load_cost_model(o.model);  // loaded once for every file
  for (const auto& f : list_npz_files(o.graph)) {
    const auto cost = rank_costs(*model, f, o);
    std::vector<int64_t> order(cost.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return cost[a] < cost[b]; });
    if (o.top > 0 && static_cast<int64_t>(order.size()) > o.top)
      order.resize(static_cast<size_t>(o.top));
    SubmissionRow row{std::filesystem::path(f).stem().string(), order};
    if (o.csv.empty()) {
      fmt::print("{}: {}\n", row.id, fmt::join(row.top_configs, " "));
    }
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw InputError(fmt::format("{}: no .npz files", o.graph));
  if (!o.csv.empty()) {
    write_submission(o.csv, rows);
    fmt::print("wrote {} rows to {}\n", rows.size(), o.csv);
  }
}

}  // namespace

void register_model_commands(CLI::App& app) {
  auto t = std::make_shared<train::TrainOptions>();
  auto* train =
      app.add_subcommand("train", "Train a cost model on DIR/train, validating on DIR/valid");
  train->add_option("--data", t->data, "Dataset root with train/ and valid/")->required();
  train->add_option("--model", t->model, fmt::format("{}", fmt::join(train::model_names(), " | ")))
      ->capture_default_str()
      ->check(CLI::IsMember(train::model_names()));
  train->add_option("--out", t->out, "Best checkpoint (also OUT.resume, OUT.log.jsonl)")
      ->required();
  train
      ->add_option(
          "--epochs", t->epochs,
          "Epochs (0 = the model's default: 80 for ast-gcn and tgraph-ast, 40 for the others)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  train->add_option("--configs", t->configs_per_step, "Configurations per graph per step")
      ->capture_default_str()
      ->check(CLI::Range(2, 100000));
  train->add_option("--loss", t->loss, fmt::format("{}", fmt::join(train::loss_names(), " | ")))
      ->capture_default_str()
      ->check(CLI::IsMember(train::loss_names()));
  train
      ->add_option("--lr", t->lr,
                   "Peak learning rate (AdamW; 0 = the model's default: 2e-3 for ast-gcn and "
                   "tgraph-ast, 1e-3 for the others)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 10.0));
  train->add_option("--weight-decay", t->weight_decay, "AdamW weight decay")->capture_default_str();
  train->add_option("--warmup", t->warmup, "Warm-up fraction of steps")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  train->add_option("--clip", t->clip, "Gradient-norm clip")->capture_default_str();
  train->add_option("--patience", t->patience, "Early-stopping patience (epochs)")
      ->capture_default_str();
  train->add_option("--seed", t->seed, "Random seed")->capture_default_str();
  train->add_option("--hidden", t->hidden, "Width (0 = model default)")->capture_default_str();
  train->add_option("--layers", t->layers, "Message-passing layers (0 = default 2)")
      ->capture_default_str();
  train->add_option("--hops", t->prune_hops, "tgraph pruning hops (-1 = no pruning)")
      ->check(CLI::Range(-1, 16));
  train->add_flag("!--no-cross-attention", t->cross_attention,
                  "tgraph: disable cross-configuration attention");
  train->add_flag("--config-pool", t->config_pool,
                  "tgraph: configuration-aware readout (the configurable nodes' mean besides "
                  "the overall mean)");
  train->add_flag("!--no-tree-attention", t->tree_attention,
                  "ast-gcn: no attention across the configurations' tree readouts");
  add_on_off_flags(
      train, "work-pool", t->work_pool,
      "ast-gcn, tgraph-ast: attention pooling over each tree's nodes, with the log-sum-exp of "
      "its scores (the tree's work when the score learns its trips); default: on",
      "ast-gcn, tgraph-ast: no pooling by work");
  train
      ->add_option("--dropout", t->dropout,
                   "ast-gcn, tgraph-ast: dropout probability in training on the trees' node "
                   "features, GCN updates and the head's hidden layer")
      ->capture_default_str();
  add_on_off_flags(
      train, "tree-passes", t->tree_passes,
      "ast-gcn, tgraph-ast: before the GCN layers, a pass down each syntax tree (parent to "
      "child) and one up (children to parent), so that every node reads its enclosing loops and "
      "what lies below it; default: on for both",
      "ast-gcn, tgraph-ast: no tree passes");
  train
      ->add_option("--tree-pass-cell", t->tree_pass_cell,
                   "the tree passes' cell: relu (relu(A x + U s)), gru (a GRU cell's gated "
                   "update of the parent's or children's state s) or norm (relu(LN(A x + U s)))")
      ->check(CLI::IsMember(model::tree_pass_cells()))
      ->capture_default_str();
  train->add_flag("--tree-pass-whole", t->tree_pass_whole,
                  "the tree passes over the whole tree: up first, then down reading the parent's "
                  "states of both passes, so that a node reads its siblings' subtrees too");
  train->add_flag("--hand-features", t->hand_features,
                  "ast-gcn, tgraph-ast: the head reads each tree's hand-crafted features "
                  "(XGBoost's on the trees) beside its pooled node features");
  train->add_flag("--tree-skip", t->tree_skip,
                  "tgraph-ast: a linear score of the tree branch's features added to the joint "
                  "head's, a path of the trees' own to the score");
  train->add_flag("--include-valid", t->include_valid,
                  "Train on train/ and valid/ together for all --epochs, without validation, "
                  "and keep the last epoch (the final fit, once validation chose the options)");
  train
      ->add_option("--average-last", t->average_last,
                   "Without validation (--include-valid): train the last N epochs at the "
                   "learning rate reached when they start and keep the mean of their weights "
                   "(stochastic weight averaging; 0 = the last epoch's weights)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  train->add_option("--threads", t->threads, "Threads (0 = all cores)")->capture_default_str();
  train
      ->add_option("--train-configs", t->max_train_configs,
                   "Cut each training graph to this many configurations, drawn at random from "
                   "the seed (0 = all; a learning curve over schedules per program)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  train
      ->add_option("--valid-configs", t->max_valid_configs,
                   "Validation configs per graph (0 = all)")
      ->capture_default_str();
  train->add_flag("--resume", t->resume, "Continue from OUT.resume");
  train->add_option("--init", t->init,
                    "Start from this checkpoint's weights where names and shapes match "
                    "(fine-tune a pretrained model)");
  train->add_option("--stop-after", t->stop_after, "End this run after N epochs (resume later)")
      ->check(CLI::Range(0, 100000));
  train->add_option("--log", t->log, "JSON-lines training log (default OUT.log.jsonl)");
  train->add_flag("--quiet", t->quiet, "No per-epoch lines");
  train
      ->add_option("--batch-graphs", t->batch_graphs,
                   "Graphs per optimiser step over all processes (a multiple of WORLD_SIZE)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  train
      ->add_option("--dist-timeout", t->dist_timeout_s,
                   "Distributed: seconds to wait for a peer before naming it lost")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 86400.0));
  train->callback([t] {
    train::train_model(*t);
    const char* rank = std::getenv("RANK");  // distributed: rank 0 alone has the checkpoint
    if (!t->quiet && (rank == nullptr || std::string(rank) == "0")) {
      fmt::print("see it: tcost report --out train-report.html --model {} --data {}\n", t->out,
                 t->data);
    }
  });

  auto e = std::make_shared<train::EvalOptions>();
  auto json = std::make_shared<bool>(false);
  auto* eval = app.add_subcommand("eval", "Evaluate a checkpoint on a dataset split");
  eval->add_option("--model", e->model, "Checkpoint")->required();
  eval->add_option("--data", e->data,
                   "Dataset root (ROOT/SPLIT or ROOT/<collection>/SPLIT; an ensemble of graph "
                   "and syntax-tree models reads ROOT/layout and ROOT/ast), or .npz files")
      ->required();
  eval->add_option("--split", e->split, "train | valid | test")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "valid", "test"}));
  eval->add_option("--threads", e->threads, "Threads (0 = all cores)");
  eval->add_flag("--json", *json, "One JSON object with mean_kendall_tau and per_graph");
  eval->callback([e, json] { print_report(train::evaluate_model(*e), *json); });

  auto r = std::make_shared<RankOptions>();
  auto* rank =
      app.add_subcommand("rank", "Rank the configurations of graphs, predicted fastest first");
  rank->add_option("--model", r->model, "Checkpoint")->required();
  rank->add_option("--graph", r->graph, "A .npz file or a directory of them")->required();
  rank->add_option("--ast", r->ast,
                   "The syntax trees of the same programs, for models that read both views: a "
                   "file, or a directory of files named as --graph's");
  rank->add_option("--top", r->top, "Keep the K fastest (0 = all)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  rank->add_option("--csv", r->csv,
                   "Write the competition CSV (ID,TopConfigs) that `tcost score` reads");
  rank->callback([r] { run_rank(*r); });

  struct EnsembleOptions {
    std::string out;
    std::vector<std::string> members;
    std::vector<double> weights;
  };
  auto en = std::make_shared<EnsembleOptions>();
  auto* ens = app.add_subcommand(
      "ensemble",
      "Write an ensemble of checkpoints (standardised costs, averaged) that every "
      "--model option reads");
  ens->add_option("--out", en->out, "Ensemble file (JSON)")->required();
  ens->add_option("--member", en->members,
                  "A member checkpoint (repeat; relative paths are read from --out's directory)")
      ->required();
  ens->add_option("--weight", en->weights, "Member weights, in member order (default: equal)");
  ens->callback([en] {
    train::write_ensemble(en->out, en->members, en->weights);
    fmt::print("wrote {} ({} members)\n", en->out, en->members.size());
  });
}

}  // namespace tcost::cli
