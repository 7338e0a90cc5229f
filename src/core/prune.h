// Subgraphs of a graph, with its configurations carried along.
//   induced_subgraph     - the graph on a set of nodes (edges between them, their configs).
//   config_neighbourhood - the configurable nodes plus their k-hop neighbourhood (edges taken
//                          in both directions): TGraph's pruning, which keeps what a layout
//                          decision can influence within k message-passing steps.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"

namespace tcost {

// Nodes in `keep` (any order, no repeats) become 0..k-1 in ascending id order. Configurable
// nodes outside `keep` are dropped with their config columns.
Graph induced_subgraph(const Graph& g, std::vector<int32_t> keep);

// Node ids (ascending) within `hops` of a configurable node; all nodes for tile graphs.
std::vector<int32_t> config_neighbourhood(const Graph& g, int hops);

}  // namespace tcost
