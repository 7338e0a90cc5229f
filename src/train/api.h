// The training layer as the CLI sees it: plain option structs and functions, no LibTorch types,
// so that CLI translation units stay cheap to compile.
//   train_model    - fits a model on <data>/train, validates on <data>/valid each epoch, keeps
//                    the best checkpoint at `out` and a resumable state at `out`.resume.
//   evaluate_model - per-graph and mean metrics of a checkpoint on a split.
//   predict_costs  - costs of every configuration in one file (the in-memory interface for
//                    search is train/cost_model.h).
//   bench_models   - inference throughput and training step time next to matmul GFLOP/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/submission.h"
#include "train/cost_model.h"

namespace tcost::train {

// Every name --loss takes: the training losses (train/losses.h), then "auto", the model's own
// (resolve_loss). The CLI's choices, resolve_loss's check and batch_loss's dispatch read it.
inline const std::vector<std::string>& loss_names() {
  static const std::vector<std::string> names = {"listmle",   "hinge",   "hinge-gap", "hinge-log",
                                                 "hinge-top", "listnet", "mse",       "auto"};
  return names;
}

struct TrainOptions {
  std::string data;              // dataset root: train/, valid/ (test/ is not read)
  std::string out;               // best checkpoint; also OUT.resume and OUT.log.jsonl
  std::string model = "tgraph";  // gcn-baseline | sage | tgraph | ast-gcn | xgb
  int hidden = 0;                // 0: the model's default width
  int layers = 0;                // 0: default (2)
  int prune_hops = -2;           // tgraph pruning hops; -2 default (1), -1 none
  bool cross_attention = true;   // tgraph: attention across configurations
  bool tree_attention = true;    // ast-gcn: attention across configurations (models.h)
  bool config_pool = false;      // tgraph: read out the configurable nodes' mean besides
  int work_pool = -1;    // ast-gcn, tgraph-ast: attention pool per tree (models.h); 1 on, 0 off,
                         // -1 the model's default (resolve_work_pool: on for tgraph-ast)
  double dropout = 0;    // ast-gcn, tgraph-ast: dropout in training (models.h); 0 = none
  int tree_passes = -1;  // ast-gcn, tgraph-ast: passes down and up the trees (models.h); 1 on,
                         // 0 off, -1 the model's default (resolve_tree_passes: on for both)
  std::string tree_pass_cell = "relu";  // those passes' cell: relu | gru | norm (models.h)
  bool tree_pass_whole = false;         // up first, then down reading both (models.h)
  bool hand_features = false;  // ast-gcn, tgraph-ast: the head reads the trees' hand-crafted
                               // features too (models.h)
  bool tree_skip = false;      // tgraph-ast: the trees' own linear score added (models.h)
  std::string loss = "auto";   // one of loss_names()
  int epochs = 0;              // 0: the model's default (resolve_epochs)
  int configs_per_step = 32;   // K configurations of one graph per step
  double lr = 0;               // peak; 0: the model's default (resolve_lr)
  double weight_decay = 1e-5;
  double warmup = 0.05;  // fraction of steps with linear warm-up, then cosine decay
  double clip = 1.0;     // gradient-norm clipping
  double margin = 1.0;   // hinge margin
  int patience = 12;     // epochs without validation gain before stopping
  // Train on train/ and valid/ together for all `epochs`, without validation, and keep the last
  // epoch: the final fit once a run with validation has chosen the options and epochs.
  bool include_valid = false;
  // Without validation: the last N epochs train at the learning rate the schedule reached when
  // they start, held, and the checkpoint is the mean of the weights at their ends (stochastic
  // weight averaging); 0 keeps the last epoch's.
  int average_last = 0;
  uint64_t seed = 0;
  int eval_chunk = 256;              // configurations per forward pass at evaluation
  int64_t max_valid_configs = 1000;  // validation subsample per graph (0 = all)
  int64_t max_train_configs = 0;     // each training graph cut to this many at random (0 = all)
  int threads = 0;                   // 0: LibTorch's default (all cores)
  bool resume = false;               // continue from OUT.resume
  // Start from the weights of this checkpoint (same model kind) where names and shapes match:
  // pretraining, then fine-tuning. Ignored with --resume (the resumed state holds them).
  std::string init;
  int stop_after = 0;  // end this run after N epochs (0 = never); continue with resume
  std::string log;     // JSON-lines log; default OUT.log.jsonl
  bool quiet = false;  // no per-epoch lines on stdout
  // Graphs per optimiser step, over all processes (each of W takes batch_graphs / W).
  int batch_graphs = 1;
  // Distributed (WORLD_SIZE > 1): how long to wait for a peer before naming it lost.
  double dist_timeout_s = 60;
};

// With torchrun's environment (WORLD_SIZE > 1), joins a c10d/Gloo process group and trains
// data-parallel (docs/distributed.md); rank 0 alone writes the checkpoint, resume state and log.
void train_model(const TrainOptions& options);

struct EvalOptions {
  std::string model;  // checkpoint
  std::string data;   // dataset root, or a directory / file of .npz
  std::string split = "test";
  int threads = 0;
};

ScoreReport evaluate_model(const EvalOptions& options);
// The same for a model in memory. A model reading several views (an ensemble of graph and
// syntax-tree models) takes a root holding them side by side: ROOT/layout/SPLIT and
// ROOT/ast/SPLIT, files of the same names and runtimes; a one-view model takes ROOT/SPLIT,
// ROOT/<its collection>/SPLIT, or a directory or file of .npz.
ScoreReport evaluate_cost_model(CostModel& model, const std::string& data,
                                const std::string& split = "test");

// LibTorch's intra-op threads and OpenBLAS's own pool (core/blas.h) both set to `threads`; 0
// leaves both as they are. What --threads of train, eval and bench, and load_cost_model's
// threads, mean.
void set_threads(int threads);

// Predicted costs of every configuration of a graph (higher = slower).
std::vector<double> predict_costs(const std::string& model_path, const std::string& graph_path);

struct BenchModelOptions {
  int pruned_nodes = 300;  // nodes of the inference benchmark graph
  int configs = 1024;      // configurations scored in the inference benchmark
  int chunk = 256;
  int repeats = 3;
  int threads = 0;
  uint64_t seed = 1;
  // When set: per model, NAME.npz (prepared graph, configurations, parameters and buffers, the
  // scores) and NAME.json (options and timings), for scripts/bench-python.py.
  std::string export_dir;
};

void bench_models(const BenchModelOptions& options);

}  // namespace tcost::train
