// The XGBoost baseline (C API, pairwise ranking objective) on hand-crafted features.
#pragma once

#include <vector>

#include "core/graph.h"
#include "train/api.h"
#include "train/checkpoint.h"

namespace tcost::train {

void train_xgb(const TrainOptions& options);

// A booster loaded once from its serialised bytes (a checkpoint's "xgb" entry).
class XgbBooster {
 public:
  XgbBooster(const std::vector<uint8_t>& bytes, int threads);
  ~XgbBooster();
  XgbBooster(const XgbBooster&) = delete;
  XgbBooster& operator=(const XgbBooster&) = delete;
  // Predicted costs (higher = slower) of every configuration of g.
  std::vector<double> predict(const Graph& g) const;
  // `rounds` more boosting rounds fitted to the measured graphs (training continuation).
  void boost(const std::vector<Graph>& measured, int rounds);
  std::vector<uint8_t> bytes() const;

 private:
  void* handle_ = nullptr;  // BoosterHandle
  int rounds_done_ = 0;
};

}  // namespace tcost::train
