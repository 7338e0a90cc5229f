// The learned cost models. Each scores configurations of one graph:
//   forward(graph, configs) -> (K) predicted costs; HIGHER MEANS SLOWER.
// Models (factory names):
//   gcn-baseline - the TpuGraphs layout baseline: opcode embedding, config features on their
//                  nodes, residual GCN (symmetric normalisation), mean + sum pooling.
//   sage         - GraphSAGE with early fusion of config features, residual, mean pooling.
//   tgraph       - TGraph: pruned graph, categorical config embeddings, Linear -> LayerNorm ->
//                  squeeze-excitation -> cross-configuration attention -> GELU, SAGE blocks
//                  with residuals, mean pooling, linear head. Tile graphs join the graph-level
//                  config features to every node.
//   ast-gcn      - syntax-tree GCN: one loop-nest tree per configuration (ast datasets),
//                  residual GCN, per-tree readout (optionally with attention across the
//                  configurations), MLP regressing standardised log runtime.
//   tgraph-ast   - both views in one network: TGraph's pooled features of the layout graph and
//                  ast-gcn's hidden head features of each configuration's syntax tree,
//                  concatenated, scored by an MLP (GraphInput::trees carries the trees).
// Work that does not depend on the configuration (node encoders) runs once per forward call,
// shared by all K configurations.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <string>
#include <vector>

#include "model/features.h"

namespace tcost::model {

// Architecture options; stored in checkpoints as JSON. 0 / -2 mean "the model's default".
struct ModelOptions {
  std::string name = "tgraph";  // gcn-baseline | sage | tgraph | tgraph-ast | ast-gcn
  int hidden = 0;               // width (defaults: gcn 32, sage 64, tgraph 128)
  int layers = 0;               // message-passing layers (default 2)
  int opcode_dim = 32;          // opcode embedding width
  int config_embed_dim = 8;     // tgraph: embedding width per layout slot value
  int prune_hops = -2;          // tgraph: k-hop pruning (default 1); -1 disables
  bool cross_attention = true;  // tgraph: attention across configurations
  // tgraph: configuration-aware readout: the head reads the mean over the configurable nodes
  // beside the mean over all nodes (layout graphs; tile graphs read the overall mean twice).
  bool config_pool = false;
  // ast-gcn: cross-configuration attention (as tgraph's) over the trees' mean readouts, so
  // that each configuration's cost is read beside the other configurations of its program.
  // Off where a checkpoint's options lack it (ast-gcn checkpoints written before it existed);
  // tcost train turns it on for ast-gcn unless --no-tree-attention.
  bool tree_attention = false;
  // ast-gcn (and tgraph-ast's trees): a third readout per tree, an attention pool whose weights
  // are a softmax of a learned score over the tree's nodes, beside the log-sum-exp of those
  // scores (with a score that learns a * log trips, the log of the tree's total work).
  bool work_pool = false;
  // ast-gcn (and tgraph-ast's trees): before the GCN layers, a pass down each tree (a node's
  // state from its own features and its parent's state, root first) and a pass up (from its
  // own features and the mean of its children's states, leaves first), added to the node
  // features, so that every node reads all of its enclosing loops and everything below it,
  // which a few GCN layers over trees 12-43 deep cannot carry.
  bool tree_passes = false;
  // The cell of those passes: "relu" (a node's state relu(A x + U s), s its parent's state or
  // its children's mean) or "gru" (a GRU cell's update of s from x, gated, so that a state
  // can carry its enclosing loops over many levels unchanged) or "norm" (relu(LN(A x + U s)),
  // a layer norm per pass holding each state's scale over many levels).
  std::string tree_pass_cell = "relu";
  // The passes over the whole tree: the up pass first, then the down pass reads its parent's
  // states of both passes, so that a node reads its siblings' subtrees too (the parent's up
  // state), not only its enclosing loops and what lies below it.
  bool tree_pass_whole = false;
  // ast-gcn (and tgraph-ast's trees): the head reads each tree's hand-crafted features
  // (handcrafted_tree_features, XGBoost's on the trees: aggregates of the loop nest and their
  // differences from the default schedule's) beside its pooled node features, a "wide" input
  // beside the deep one. The normaliser carries their statistics (GraphInput::hand).
  bool hand_features = false;
  // tgraph-ast: a linear score of the tree branch's features added to the joint head's, so
  // that the trees have a path of their own to the score (the tree encoder trained as if alone,
  // the joint head adding what the layout graph tells).
  bool tree_skip = false;
  // ast-gcn (and tgraph-ast's trees and head): dropout probability in training on the nodes'
  // input features, each GCN layer's update and the head's hidden layer; 0 = none.
  double dropout = 0;
  int64_t segment_nodes = 5000;  // gcn/sage: train on segments of this many nodes (0 = whole)

  std::string to_json() const;
  static ModelOptions from_json(const std::string& text);  // rejects unknown keys
  // The options with defaults resolved for `name`.
  ModelOptions resolved() const;
};

std::vector<std::string> model_names();  // the names the factory knows, neural ones

class Network : public torch::nn::Module {
 public:
  // Training and inference. The layout models run node-major (models.cpp).
  virtual torch::Tensor forward(const GraphInput& graph, const torch::Tensor& configs) = 0;
  // forward for inference (call eval() first): under c10::InferenceMode, in place where it can.
  torch::Tensor score(const GraphInput& graph, const torch::Tensor& configs);
  // The model as first written, batch-major with edge-list gather/scatter message passing: the
  // definition forward is tested against (tests/model), and what scripts/bench-python.py copies
  // line for line. The same scores up to float rounding. Defaults to forward.
  virtual torch::Tensor reference_forward(const GraphInput& graph, const torch::Tensor& configs);
  // Node pruning this model wants at preparation (-1: none).
  virtual int prune_hops() const { return -1; }
  // Segment size for training on large graphs (0: whole graph).
  virtual int64_t segment_nodes() const { return 0; }
  // Multiply-adds of one forward pass per configuration, for throughput figures.
  virtual double flops_per_config(const GraphInput& graph) const = 0;
};

struct ModelDims {
  Collection collection = Collection::kLayout;
  int64_t node_feat_width = 140;
  int64_t config_feat_width = 18;
  int64_t tree_feat_width = 0;  // tgraph-ast: node features of the syntax trees beside the graph
};

// The input widths a normaliser was fitted on.
ModelDims dims_of(const Normalizer& norm);

// UsageError for an unknown name.
std::shared_ptr<Network> make_model(const ModelOptions& options, const ModelDims& dims,
                                    const Normalizer& norm);

}  // namespace tcost::model
