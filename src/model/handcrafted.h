// Hand-crafted features for the XGBoost baseline, the classic comparison of the field (as in
// TVM's cost model): graph statistics shared by all configurations plus per-configuration
// features. No LibTorch.
//   Graph part: log node/edge/configurable-node counts, opcode-family fractions, mean and max
//     log element count.
//   Layout configs: for every (slot, value) of the 18 layout slots, the fraction of
//     configurable nodes holding that value; the element-weighted fraction of nodes whose output,
//     input and kernel layouts are row-major (the default); the fraction of edges between
//     configurable nodes whose producer output layout differs from the consumer's input layout.
//   Tile configs: the 24 features, their logs, and tile counts per output dim.
#pragma once

#include <vector>

#include "core/graph.h"

namespace tcost::model {

// Row-major (num_configs x handcrafted_width(g)).
std::vector<float> handcrafted_features(const Graph& g);
int handcrafted_width(Collection collection);

}  // namespace tcost::model
