// Turning graphs into tensors for the learned models.
//   kFeatureSchemaVersion - bumped whenever the meaning of any model input changes; stored in
//                           checkpoints and checked on load.
//   Normalizer     - statistics fitted on the training split only: node features (sign-log1p,
//                    then standardised per column), tile config features (log1p, standardised),
//                    log-target mean/std (for the MSE loss).
//   GraphInput     - the configuration-independent tensors of one graph, computed once per
//                    graph and shared by all of its configurations.
//   PreparedGraph  - a GraphInput plus all configurations and their targets.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ast.h"
#include "core/dataset.h"
#include "core/graph.h"

namespace tcost::model {

constexpr int kFeatureSchemaVersion = 2;

struct Normalizer {
  Collection collection = Collection::kLayout;
  int64_t node_feat_width = 0;
  int64_t config_feat_width = 0;
  torch::Tensor node_mean, node_std;  // (node_feat_width)
  torch::Tensor tile_mean, tile_std;  // (config_feat_width), tile only
  double log_target_mean = 0, log_target_std = 1;
  // Models that read two views (tgraph-ast): the syntax trees' statistics beside the graphs'.
  std::shared_ptr<const Normalizer> trees;
  // Syntax trees, for a model that reads their hand-crafted features (ModelOptions::
  // hand_features): those features' statistics (handcrafted_tree_width()); undefined otherwise.
  torch::Tensor hand_mean, hand_std;

  // Fits on every graph of `files` (at most max_configs configurations each).
  static Normalizer fit(const std::vector<std::string>& files, int64_t max_configs = 1000);
  static Normalizer fit(const std::vector<Graph>& graphs, int64_t max_configs = 1000);
  void save(torch::serialize::OutputArchive& archive) const;

 private:
  static Normalizer fit_each(size_t count, const std::function<Graph(size_t)>& get,
                             int64_t max_configs);

 public:
  static Normalizer load(torch::serialize::InputArchive& archive);
};

struct GraphInput {
  int64_t num_nodes = 0;
  torch::Tensor node_feat;       // (n, F) float, normalised
  torch::Tensor opcode;          // (n) int64
  torch::Tensor src, dst;        // (E) int64: a message per edge direction, src -> dst
  torch::Tensor inv_deg;         // (n, 1) 1 / max(in-degree, 1), for mean aggregation
  torch::Tensor gcn_norm;        // (E, 1) 1 / sqrt(d_src * d_dst), degrees counting a self loop
  torch::Tensor self_norm;       // (n, 1) 1 / d, the self loop's weight
  torch::Tensor config_pos;      // (nc) int64 node positions of the configurable nodes (layout)
  torch::Tensor dims;            // (n + 1, 6) log1p of each node's shape dims; row n is all zero
  torch::Tensor operands;        // (nc, 2) int64 first two producers of each configurable node, in
                                 // edge order (operand 0 and 1); n where there is none
  torch::Tensor operand_config;  // (nc, 2) int64 position of that producer among the
                                 // configurable nodes, -1 when it is fixed or absent
  torch::Tensor node_layout;     // (n + 1, 6) each node's own layout (node features 134-139)
  torch::Tensor tree_id;         // ast: (n) int64 the configuration each node's tree belongs to
  torch::Tensor hand;  // ast, where the normaliser has their statistics: (K, W) each tree's
                       // hand-crafted features (handcrafted_tree_features), standardised
  // ast: the nodes by depth, for passes along the trees' edges (models.h, tree_passes): level d
  // holds the nodes d edges below their tree's root (int64 ids), tree_parent[d] each one's
  // parent as a position in level d - 1 (level 0: empty), and tree_unlevel the permutation that
  // puts the levels' concatenation back in node order. tree_order is that concatenation (n)
  // int64, and tree_children[d] the number of children of each node of level d, at least 1,
  // (float, as the up pass divides by it); the passes read both for every batch they see.
  std::vector<torch::Tensor> tree_levels, tree_parent, tree_children;
  torch::Tensor tree_unlevel, tree_order;
  // Models that read two views (tgraph-ast): the syntax trees of the same K configurations, in
  // the order of `configs` (prepare_ast_batch's input).
  std::shared_ptr<const GraphInput> trees;
};

struct PreparedGraph {
  std::string name;
  Collection collection = Collection::kLayout;
  GraphInput input;
  torch::Tensor configs;  // (c, nc, W) layout or (c, W) tile, raw values
  torch::Tensor targets;  // (c) float64: runtime (layout) or runtime / normaliser (tile)
  int64_t num_configs() const { return targets.size(0); }
};

// prune_hops >= 0 keeps only configurable nodes and their k-hop neighbourhood (layout graphs).
PreparedGraph prepare_graph(const Graph& g, const Normalizer& norm, int prune_hops);
// The same graph restricted to configurations `index` (a 1-d int64 tensor).
PreparedGraph select_configs(const PreparedGraph& g, const torch::Tensor& index);

// Both views of configurations `index` of one program: the layout graph `g` restricted to them,
// with their syntax trees from `trees` (the same configurations in the same order) attached as
// input.trees, prepared with norm.trees. InputError when the views do not match.
PreparedGraph select_views(const PreparedGraph& g, const AstSet& trees,
                           const std::vector<int64_t>& index, const Normalizer& norm);

// Syntax trees: statistics over the node features of every tree in `files`; with hand_features,
// over the trees' hand-crafted features too (their first max_configs configurations each).
Normalizer fit_ast_normalizer(const std::vector<std::string>& files, bool hand_features = false,
                              int64_t max_configs = 1000);
// The trees of configurations `indices` of one program as one disjoint graph: node_feat and
// opcode (= node kind) per node, edges both ways, tree_id per node; configs is (K, 0). With
// hand-crafted feature statistics in `norm`, also input.hand.
PreparedGraph prepare_ast_batch(const AstSet& set, const std::vector<int64_t>& indices,
                                const Normalizer& norm);

}  // namespace tcost::model
