// The XGBoost baseline (C API, pairwise ranking objective) on hand-crafted features.
#pragma once

#include <vector>

#include "core/graph.h"
#include "train/api.h"
#include "train/checkpoint.h"

namespace tcost::train {

void train_xgb(const TrainOptions& options);
// Predicted costs (higher = slower) of every configuration of g.
std::vector<double> xgb_predict(const Checkpoint& checkpoint, const Graph& g);

}  // namespace tcost::train
