// The pieces of training that the trainer (trainer.cpp) and the in-memory cost model's refit
// (cost_model.cpp) share: one optimiser step on a batch of configurations, and prediction over
// all configurations of a prepared graph or syntax-tree set in cache-sized chunks.
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "core/ast.h"
#include "model/features.h"
#include "model/models.h"

namespace tcost::train {

struct StepOptions {
  std::string loss = "hinge";  // one of loss_names() (train/api.h) but auto
  double margin = 1.0;         // hinge margin
  double clip = 1.0;           // gradient-norm clipping
  double lr = 1e-3;            // learning rate of this step
};

// The loss of `cost` against the batch's targets; UsageError for a name that is not a loss.
torch::Tensor batch_loss(const torch::Tensor& cost, const model::PreparedGraph& batch,
                         const model::Normalizer& norm, const StepOptions& o);
// Forward, loss and backward of `scale` times the loss, adding to the gradients (a step over
// several graphs scales each by 1/graphs). Returns the unscaled loss.
double accumulate_gradients(model::Network& m, const model::PreparedGraph& batch,
                            const model::Normalizer& norm, const StepOptions& o, double scale);
// Clipping and one optimiser step at o.lr on the gradients accumulated so far.
void apply_gradients(model::Network& m, torch::optim::Optimizer& opt, const StepOptions& o);
// zero_grad, accumulate_gradients and apply_gradients on one batch. Returns the loss.
double optimizer_step(model::Network& m, torch::optim::Optimizer& opt,
                      const model::PreparedGraph& batch, const model::Normalizer& norm,
                      const StepOptions& o);

// Costs of all configurations of a prepared graph, in chunks, without gradients. A model that
// reads both views (tgraph-ast) takes the same configurations' syntax trees and its normaliser.
std::vector<double> predict_prepared(model::Network& m, const model::PreparedGraph& g,
                                     int64_t chunk, int64_t hidden, const AstSet* trees = nullptr,
                                     const model::Normalizer* norm = nullptr);
// Costs of all configurations of a syntax-tree set, batch by batch.
std::vector<double> predict_ast(model::Network& m, const AstSet& set, const model::Normalizer& norm,
                                int64_t chunk);

// The loss a model trains with by default ("auto"): hinge for tgraph, hinge-log for ast-gcn and
// tgraph-ast (hinge-gap from 2026-12-01 to 2026-12-07, mse before; checkpoints keep the loss
// they were trained with), listmle otherwise.
// UsageError for an unknown name.
std::string resolve_loss(const std::string& loss, const std::string& model);

// The epochs a model trains for by default (epochs 0): 80 for ast-gcn and tgraph-ast (40 before
// 2026-12-02; chosen by k-fold cross-validation over families, README), 40 for the others (xgb: 5
// boosting rounds an epoch). Other values are kept.
int resolve_epochs(int epochs, const std::string& model);

// The peak learning rate a model trains with by default (lr 0): 2e-3 for ast-gcn and
// tgraph-ast (1e-3 before 2026-12-02; chosen by k-fold cross-validation over families, README),
// 1e-3 for the others (xgb has its own). Other values are kept.
double resolve_lr(double lr, const std::string& model);

// Whether a model pools each syntax tree by work (models.h, ModelOptions::work_pool) by default
// (work_pool -1): tgraph-ast does since 2026-12-02, ast-gcn since 2026-12-03 (each chosen by
// k-fold cross-validation over families, README); no other model reads trees. 0 and 1 are kept.
bool resolve_work_pool(int work_pool, const std::string& model);

// Whether a model passes down and up each syntax tree (models.h, ModelOptions::tree_passes) by
// default (tree_passes -1): ast-gcn and tgraph-ast do since 2026-12-06 (chosen by the k-fold over
// families, docs/model-studies.md); no other model reads trees. 0 and 1 are kept.
bool resolve_tree_passes(int tree_passes, const std::string& model);

}  // namespace tcost::train
