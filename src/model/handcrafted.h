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

#include "core/ast.h"
#include "core/graph.h"

namespace tcost::model {

// Row-major (num_configs x handcrafted_width(g)).
std::vector<float> handcrafted_features(const Graph& g);
int handcrafted_width(Collection collection);

// Hand-crafted features of syntax trees (AstSet), for XGBoost on the loop nests as TVM's and
// Ansor's cost models featurise them: per configuration, aggregates of its lowered tree, then
// the same aggregates minus those of configuration 0 (the default schedule). Executions below
// are a node's trip count (2^log-trips - 1); "work" of a store is executions x bytes.
//   size: log nodes, deepest depth;
//   per node kind (16): log count, log executions;
//   loads, then stores: log bytes moved; split by the stride along the innermost loop (reused,
//     contiguous, 2-16 elements, wider, not constant) and along the loop around it (reused,
//     contiguous, wider, not constant);
//   arithmetic (add, mul, min/max, select, call): log executions, log lane operations, the
//     vectorised share of executions, log lane operations minus log bytes moved (intensity);
//   parallel loops: count, log launches, log tasks, log widest; the share of store work under a
//     parallel loop, and over that work the mean log tasks, log work per task and log launches
//     of the nearest parallel loop;
//   serial, vectorised and unrolled loops: log iterations, log widest; over innermost loops
//     (weighted by iterations) the mean log extent and log footprint; all loops: log entries,
//     log iterations, largest log footprint;
//   allocations: count, log executions, log bytes allocated over executions, log largest, largest
//     log footprint;
//   stores: mean vector lanes over executions.
// InputError for trees of another width than kAstFeatureWidth (an older lowering).
std::vector<float> handcrafted_tree_features(const AstSet& s);  // (num_configs x width) row-major
int handcrafted_tree_width();

}  // namespace tcost::model
