// Checkpoint files: one file holding a model's weights, its architecture options, the feature
// normaliser and the feature-schema version, plus (optionally) optimiser and trainer state.
// Format: a LibTorch archive with keys
//   "meta"       - JSON string: {"format": "tcost-checkpoint", "format_version": 1,
//                  "feature_schema": N, "model": {ModelOptions}, "epoch": E, "valid_tau": T, ...}
//   "normalizer" - Normalizer tensors (features.h)
//   "model"      - module parameters and buffers (neural models)
//   "xgb"        - uint8 tensor: XGBoost model bytes (xgb)
//   "optimizer"  - AdamW state (resume files only)
// Loading checks the format name, format version and feature schema, and turns every LibTorch
// error into an InputError naming the file.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>

#include "model/features.h"
#include "model/models.h"

namespace tcost::train {

constexpr int kCheckpointFormatVersion = 1;

struct CheckpointMeta {
  model::ModelOptions model;
  int epoch = 0;
  int64_t step = 0;
  double valid_tau = 0;
  double best_valid_tau = -2;
  int epochs_since_best = 0;
  std::string loss;
  // --average-last: how many epochs' weights the model holds the mean of (0: one epoch's).
  int averaged_epochs = 0;
};

struct Checkpoint {
  CheckpointMeta meta;
  model::Normalizer normalizer;
  std::shared_ptr<model::Network> model;  // neural models
  std::vector<uint8_t> xgb_model;         // xgb
};

// Writes atomically (a temporary file renamed into place).
void save_checkpoint(const std::string& path, const CheckpointMeta& meta,
                     const model::Normalizer& norm, const std::shared_ptr<model::Network>& model,
                     const std::vector<uint8_t>& xgb_model, torch::optim::Optimizer* optimizer);
// Loads and rebuilds the model.
Checkpoint load_checkpoint(const std::string& path);
// Restores optimiser state saved with the checkpoint (resume files).
void load_optimizer_state(const std::string& path, torch::optim::Optimizer& optimizer);

}  // namespace tcost::train
