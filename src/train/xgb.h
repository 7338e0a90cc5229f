// The XGBoost baseline (C API, pairwise ranking objective) on hand-crafted features: of the
// layout or tile graph (model/handcrafted.h), or of each configuration's syntax tree when trained
// on syntax-tree data (TVM's and Ansor's way: loop-nest aggregates).
#pragma once

#include <vector>

#include "core/ast.h"
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
  std::vector<double> predict(const AstSet& s) const;  // a booster trained on syntax trees
  // `rounds` more boosting rounds fitted to the measured programs, graphs or syntax trees
  // (whichever the booster reads; training continuation).
  void boost(const std::vector<Graph>& measured, const std::vector<AstSet>& trees, int rounds);
  std::vector<uint8_t> bytes() const;

 private:
  void* handle_ = nullptr;  // BoosterHandle
  int rounds_done_ = 0;
};

}  // namespace tcost::train
