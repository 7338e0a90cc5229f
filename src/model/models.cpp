#include "model/models.h"

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/ast.h"
#include "core/error.h"
#include "core/opcodes.h"
#include "model/handcrafted.h"
#include "model/tree_pass_cells.h"

namespace tcost::model {
namespace {

constexpr int kLayoutValues = 8;  // layout slot values -1..6 map to 0..7 (categorical inputs)

// Messages of x (K, n, H) along edges; mean over each node's neighbours.
torch::Tensor mean_aggregate(const GraphInput& g, const torch::Tensor& x) {
  if (g.src.numel() == 0) return torch::zeros_like(x);
  return torch::zeros_like(x).index_add(1, g.dst, x.index_select(1, g.src)) * g.inv_deg;
}

// Symmetrically normalised aggregation with self loops: D^-1/2 (A + I) D^-1/2 x.
torch::Tensor gcn_aggregate(const GraphInput& g, const torch::Tensor& x) {
  auto out = x * g.self_norm;
  if (g.src.numel() == 0) return out;
  return out.index_add(1, g.dst, x.index_select(1, g.src) * g.gcn_norm);
}

// The models run node-major (forward): x is (n, K, H), so that a message-passing step is one
// sparse (n x n) by dense (n x K*H) product instead of a gather, a scale and a scatter over K
// copies of every edge (about 10x faster on the benchmark graph), every per-node op sees
// contiguous rows, and every linear layer is one addmm over (n*K, H). The batch-major
// functions above and the modules' reference_forward are the models as first written: the
// definition that forward is tested against.

// D^-1 A (no self loops): row dst holds 1/deg(dst) at each source.
torch::Tensor mean_matrix(const GraphInput& g) {
  return torch::sparse_coo_tensor(torch::stack({g.dst, g.src}),
                                  g.inv_deg.squeeze(1).index_select(0, g.dst),
                                  {g.num_nodes, g.num_nodes})
      .coalesce();
}

// D^-1/2 (A + I) D^-1/2.
torch::Tensor gcn_matrix(const GraphInput& g) {
  const auto self = torch::arange(g.num_nodes, torch::kInt64);
  return torch::sparse_coo_tensor(
             torch::stack({torch::cat({g.dst, self}), torch::cat({g.src, self})}),
             torch::cat({g.gcn_norm.squeeze(1), g.self_norm.squeeze(1)}),
             {g.num_nodes, g.num_nodes})
      .coalesce();
}

// The sparse (n x n) matrix applied along the node axis of x (n, K, H).
torch::Tensor propagate_nodes(const torch::Tensor& a, const torch::Tensor& x) {
  if (a._nnz() == 0) return torch::zeros_like(x);
  return torch::mm(a, x.reshape({x.size(0), -1})).view(x.sizes());
}

// In-place elementwise ops save an allocation and a pass over (n, K, H) but would overwrite
// values that autograd keeps for the backward pass: only without gradients.
bool in_place() { return !torch::GradMode::is_enabled(); }
torch::Tensor gelu_maybe_in_place(torch::Tensor x) {
  return in_place() ? torch::gelu_(x) : torch::gelu(x);
}

// A linear layer over the last axis of x (.., H) as one addmm (or mm without bias).
torch::Tensor apply_linear(const torch::nn::Linear& lin, const torch::Tensor& x) {
  const auto flat = x.reshape({-1, x.size(-1)});
  auto out = lin->bias.defined() ? torch::addmm(lin->bias, flat, lin->weight.t())
                                 : torch::mm(flat, lin->weight.t());
  auto sizes = x.sizes().vec();
  sizes.back() = lin->weight.size(0);
  return out.view(sizes);
}

// Encodes nodes and configurations into x (K, n, H): the node part once, the config part per
// configuration, joined by early fusion (sum of linear maps = linear map of the concatenation).
struct InputEncoderImpl : torch::nn::Module {
  InputEncoderImpl(const ModelDims& d, const Normalizer& norm, int hidden, int opcode_dim,
                   bool categorical, int embed_dim)
      : collection(d.collection), width(d.config_feat_width), categorical_(categorical) {
    opcode = register_module("opcode", torch::nn::Embedding(kNumOpcodes, opcode_dim));
    node = register_module("node", torch::nn::Linear(d.node_feat_width + opcode_dim, hidden));
    if (collection == Collection::kLayout && categorical) {
      slot_value =
          register_module("slot_value", torch::nn::Embedding(width * kLayoutValues, embed_dim));
      config = register_module("config", torch::nn::Linear(width * embed_dim, hidden));
      physical = register_module("physical", torch::nn::Linear(width + kMatchFeatures, hidden));
      sentinel = register_parameter("sentinel", torch::zeros({hidden}));
      slot_offset =
          register_buffer("slot_offset", torch::arange(width, torch::kInt64) * kLayoutValues);
    } else {
      config = register_module("config", torch::nn::Linear(width, hidden));
    }
    tile_mean = register_buffer("tile_mean", norm.tile_mean.clone());
    tile_std = register_buffer("tile_std", norm.tile_std.clone());
  }

  torch::Tensor forward(const GraphInput& g, const torch::Tensor& configs) {
    const auto base = node(torch::cat({g.node_feat, opcode(g.opcode)}, 1));  // (n, H): once
    const int64_t k = configs.size(0);
    if (collection == Collection::kTile) {
      const auto c = config((torch::log1p(configs.clamp_min(0)) - tile_mean) / tile_std);  // (K, H)
      return base.unsqueeze(0) + c.unsqueeze(1);
    }
    torch::Tensor c;
    if (categorical_) {
      const auto v = (configs + 1).clamp(0, kLayoutValues - 1).to(torch::kInt64) + slot_offset;
      c = config(slot_value(v).flatten(2)) + physical(physical_shape(g, configs)) -
          sentinel;  // (K, nc, H)
    } else {
      c = config((configs + 1) / 6.0);
    }
    auto x = base.unsqueeze(0).expand({k, g.num_nodes, base.size(1)});
    if (categorical_) x = x + sentinel;
    return x.index_add(1, g.config_pos, c);
  }

  // The same encoding node-major, (n, K, H). Categorical slots go through one
  // precomputed (slot, value) -> H table (the embedding folded into the linear layer) and an
  // embedding-bag sum, instead of embedding each slot and multiplying by the wide layer.
  torch::Tensor forward_node_major(const GraphInput& g, const torch::Tensor& configs) {
    auto base = apply_linear(node, torch::cat({g.node_feat, opcode(g.opcode)}, 1));  // (n, H)
    const int64_t k = configs.size(0), h = base.size(1);
    if (collection == Collection::kTile) {
      const auto c =
          apply_linear(config, (torch::log1p(configs.clamp_min(0)) - tile_mean) / tile_std);
      return base.unsqueeze(1) + c.unsqueeze(0);
    }
    const int64_t nc = configs.size(1);
    torch::Tensor c;  // (nc, K, H)
    if (categorical_) {
      const int64_t e = slot_value->weight.size(1);
      const auto table = torch::bmm(slot_value->weight.view({width, kLayoutValues, e}),
                                    config->weight.view({h, width, e}).permute({1, 2, 0}))
                             .reshape({width * kLayoutValues, h});
      const auto v = ((configs.transpose(0, 1) + 1).clamp(0, kLayoutValues - 1).to(torch::kInt64) +
                      slot_offset)
                         .reshape({-1});
      const auto offsets = torch::arange(0, v.numel(), width, torch::kInt64);
      c = std::get<0>(torch::embedding_bag(table, v, offsets, false, /*sum*/ 0));
      c = torch::addmm(c, physical_shape(g, configs).transpose(0, 1).reshape({nc * k, -1}),
                       physical->weight.t())
              .add_(config->bias + physical->bias - sentinel)
              .view({nc, k, h});
      base = base + sentinel;
    } else {
      c = apply_linear(config, (configs.transpose(0, 1) + 1) / 6.0);
    }
    return base.unsqueeze(1)
        .expand({g.num_nodes, k, h})
        .contiguous()
        .index_add_(0, g.config_pos, c);
  }

  // Layout-aware shape features: for each 6-slot layout group (output, input = operand 0,
  // kernel = operand 1), the log sizes of the dims it orders, minor first (0 for padding).
  torch::Tensor physical_shape(const GraphInput& g, const torch::Tensor& configs) const {
    const int64_t k = configs.size(0), nc = configs.size(1);
    std::vector<torch::Tensor> parts;
    const torch::Tensor owners[3] = {g.config_pos, g.operands.select(1, 0),
                                     g.operands.select(1, 1)};
    for (int t = 0; t < 3 && 6 * t + 6 <= width; ++t) {
      const auto slots = configs.narrow(2, 6 * t, 6);
      const auto valid = (slots >= 0).to(torch::kFloat32);
      const auto idx = slots.clamp(0, 5).to(torch::kInt64);
      const auto d = g.dims.index_select(0, owners[t]).unsqueeze(0).expand({k, nc, 6});
      parts.push_back(d.gather(2, idx) * valid);
    }
    auto out = torch::cat(parts, 2);
    if (out.size(2) < width) out = torch::cat({out, torch::zeros({k, nc, width - out.size(2)})}, 2);
    return torch::cat({out, layout_matches(g, configs)}, 2);
  }

  // Whether layouts agree across edges (a disagreement costs the compiler a conversion):
  // input layout vs operand 0's output layout, kernel layout vs operand 1's, and the output
  // layout vs the node's own layout in the graph. An operand's output layout is its configured
  // one when it is configurable, else its own layout.
  torch::Tensor layout_matches(const GraphInput& g, const torch::Tensor& configs) const {
    const int64_t k = configs.size(0), nc = configs.size(1);
    std::vector<torch::Tensor> flags;
    for (int t = 0; t < 2 && 6 * t + 12 <= width; ++t) {
      const auto expected = configs.narrow(2, 6 * (t + 1), 6);
      const auto oc = g.operand_config.select(1, t);
      const auto configured = configs.index_select(1, oc.clamp_min(0)).narrow(2, 0, 6);
      const auto fixed =
          g.node_layout.index_select(0, g.operands.select(1, t)).unsqueeze(0).expand({k, nc, 6});
      const auto produced = torch::where((oc >= 0).view({1, nc, 1}), configured, fixed);
      const auto present =
          (g.operands.select(1, t) < g.num_nodes).view({1, nc}).to(torch::kFloat32);
      flags.push_back(((produced == expected).all(2).to(torch::kFloat32) * present).unsqueeze(2));
    }
    const auto own = g.node_layout.index_select(0, g.config_pos).unsqueeze(0).expand({k, nc, 6});
    flags.push_back((configs.narrow(2, 0, 6) == own).all(2).to(torch::kFloat32).unsqueeze(2));
    while (static_cast<int>(flags.size()) < kMatchFeatures)
      flags.push_back(torch::zeros({k, nc, 1}));
    return torch::cat(flags, 2);
  }
  static constexpr int kMatchFeatures = 3;

  Collection collection;
  int64_t width;
  bool categorical_;
  torch::nn::Embedding opcode{nullptr}, slot_value{nullptr};
  torch::nn::Linear node{nullptr}, config{nullptr}, physical{nullptr};
  torch::Tensor sentinel, slot_offset, tile_mean, tile_std;
};
TORCH_MODULE(InputEncoder);

double encoder_flops(const GraphInput& g, int64_t hidden, int64_t in_width) {
  return static_cast<double>(g.num_nodes) * static_cast<double>(hidden * in_width);
}

// Dropout with probability p in training: the identity in evaluation and at p = 0.
torch::Tensor dropout_in_training(const torch::Tensor& x, double p, bool training) {
  return p > 0 ? torch::dropout(x, p, training) : x;
}

// Residual GCN layers x + relu(A_hat W x), then an MLP head over [mean, sum / sqrt(count)]
// pooled features (the sum scaled so that magnitudes stay comparable across sizes). Shared by
// the TpuGraphs baseline and the syntax-tree GCN.
struct ResidualGcnImpl : torch::nn::Module {
  // scalar_head = false: the head stops at its hidden layer (head_hidden), for a model that reads
  // these features beside others.
  // extra: the width of further pooled features the head reads after those two.
  // dropout: applied in training to each layer's update and to the head's hidden layer (the
  // propagate/head path only, which the syntax-tree GCN takes).
  ResidualGcnImpl(int hidden, int layers, bool scalar_head = true, int64_t extra = 0,
                  double dropout = 0)
      : dropout_(dropout) {
    for (int l = 0; l < layers; ++l) {
      layers_.push_back(
          register_module("gcn" + std::to_string(l), torch::nn::Linear(hidden, hidden)));
    }
    head1_ = register_module("head1", torch::nn::Linear(2 * hidden + extra, hidden));
    if (scalar_head) head2_ = register_module("head2", torch::nn::Linear(hidden, 1));
  }
  torch::Tensor propagate(const GraphInput& g, torch::Tensor x) {
    for (auto& lin : layers_) x = x + drop(torch::relu(gcn_aggregate(g, lin(x))));
    return x;
  }
  // x (n, K, H); a = gcn_matrix(g).
  torch::Tensor propagate_node_major(const torch::Tensor& a, torch::Tensor x) {
    for (auto& lin : layers_) x = x + propagate_nodes(a, apply_linear(lin, x)).relu_();
    return x;
  }
  torch::Tensor head_hidden(const torch::Tensor& mean, const torch::Tensor& scaled_sum,
                            const torch::Tensor& extra = {}) {
    const auto in = extra.defined() ? torch::cat({mean, scaled_sum, extra}, 1)
                                    : torch::cat({mean, scaled_sum}, 1);
    return torch::relu(head1_(in));
  }
  torch::Tensor head(const torch::Tensor& mean, const torch::Tensor& scaled_sum,
                     const torch::Tensor& extra = {}) {
    return head2_(drop(head_hidden(mean, scaled_sum, extra))).squeeze(1);
  }
  torch::Tensor drop(const torch::Tensor& x) {
    return dropout_in_training(x, dropout_, is_training());
  }
  std::vector<torch::nn::Linear> layers_;
  torch::nn::Linear head1_{nullptr}, head2_{nullptr};
  double dropout_ = 0;
};
TORCH_MODULE(ResidualGcn);

class GcnBaseline : public Network {
 public:
  GcnBaseline(const ModelOptions& o, const ModelDims& d, const Normalizer& norm) : o_(o) {
    enc_ = register_module("encoder", InputEncoder(d, norm, o.hidden, o.opcode_dim, false, 0));
    gcn_ = register_module("gcn", ResidualGcn(o.hidden, o.layers));
  }
  torch::Tensor reference_forward(const GraphInput& g, const torch::Tensor& configs) override {
    const auto x = gcn_->propagate(g, torch::relu(enc_->forward(g, configs)));
    return gcn_->head(x.mean(1), x.sum(1) / std::sqrt(static_cast<double>(g.num_nodes)));
  }
  torch::Tensor forward(const GraphInput& g, const torch::Tensor& configs) override {
    const auto x =
        gcn_->propagate_node_major(gcn_matrix(g), enc_->forward_node_major(g, configs).relu_());
    return gcn_->head(x.mean(0), x.sum(0) / std::sqrt(static_cast<double>(g.num_nodes)));
  }
  int64_t segment_nodes() const override { return o_.segment_nodes; }
  double flops_per_config(const GraphInput& g) const override {
    const double n = static_cast<double>(g.num_nodes), h = o_.hidden;
    return n * h * h * o_.layers + static_cast<double>(g.src.numel()) * h * o_.layers;
  }

 private:
  ModelOptions o_;
  InputEncoder enc_{nullptr};
  ResidualGcn gcn_{nullptr};
};

// One SAGE block: x + act(norm(W_self x + W_neigh mean(neighbours))).
struct SageBlockImpl : torch::nn::Module {
  explicit SageBlockImpl(int h) {
    self_ = register_module("self", torch::nn::Linear(h, h));
    neigh_ =
        register_module("neigh", torch::nn::Linear(torch::nn::LinearOptions(h, h).bias(false)));
    norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({h})));
  }
  torch::Tensor forward(const GraphInput& g, const torch::Tensor& x) {
    return x + torch::gelu(norm_(self_(x) + neigh_(mean_aggregate(g, x))));
  }
  // x (n, K, H); a = mean_matrix(g). W_self x + b and W_neigh (A x) accumulate in one addmm.
  torch::Tensor forward_node_major(const torch::Tensor& a, const torch::Tensor& x) {
    const int64_t h = x.size(2);
    const auto flat = x.view({-1, h});
    const auto agg = propagate_nodes(a, x).view({-1, h});
    const auto y =
        torch::addmm(torch::addmm(self_->bias, flat, self_->weight.t()), agg, neigh_->weight.t());
    auto out = gelu_maybe_in_place(norm_(y.view(x.sizes())));
    return in_place() ? out.add_(x) : out + x;
  }
  torch::nn::Linear self_{nullptr}, neigh_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
};
TORCH_MODULE(SageBlock);

class Sage : public Network {
 public:
  Sage(const ModelOptions& o, const ModelDims& d, const Normalizer& norm) : o_(o) {
    enc_ = register_module("encoder", InputEncoder(d, norm, o.hidden, o.opcode_dim, false, 0));
    for (int l = 0; l < o.layers; ++l)
      blocks_.push_back(register_module("sage" + std::to_string(l), SageBlock(o.hidden)));
    head_ = register_module("head", torch::nn::Linear(o.hidden, 1));
  }
  torch::Tensor reference_forward(const GraphInput& g, const torch::Tensor& configs) override {
    auto x = torch::gelu(enc_->forward(g, configs));
    for (auto& b : blocks_) x = b->forward(g, x);
    return head_(x.mean(1)).squeeze(1);
  }
  torch::Tensor forward(const GraphInput& g, const torch::Tensor& configs) override {
    auto x = gelu_maybe_in_place(enc_->forward_node_major(g, configs));
    const auto a = mean_matrix(g);
    for (auto& b : blocks_) x = b->forward_node_major(a, x);
    return head_(x.mean(0)).squeeze(1);
  }
  int64_t segment_nodes() const override { return o_.segment_nodes; }
  double flops_per_config(const GraphInput& g) const override {
    const double n = static_cast<double>(g.num_nodes), h = o_.hidden;
    return 2 * n * h * h * o_.layers + static_cast<double>(g.src.numel()) * h * o_.layers;
  }

 private:
  ModelOptions o_;
  InputEncoder enc_{nullptr};
  std::vector<SageBlock> blocks_;
  torch::nn::Linear head_{nullptr};
};

// Squeeze-excitation over channels, per configuration: x * sigmoid(W2 relu(W1 mean_nodes(x))).
struct SqueezeExciteImpl : torch::nn::Module {
  explicit SqueezeExciteImpl(int h) {
    fc1 = register_module("fc1", torch::nn::Linear(h, std::max(4, h / 4)));
    fc2 = register_module("fc2", torch::nn::Linear(std::max(4, h / 4), h));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    return x * torch::sigmoid(fc2(torch::relu(fc1(x.mean(1))))).unsqueeze(1);
  }
  torch::Tensor forward_node_major(torch::Tensor x) {  // x (n, K, H)
    const auto scale = torch::sigmoid(fc2(torch::relu(fc1(x.mean(0))))).unsqueeze(0);
    return in_place() ? x.mul_(scale) : x * scale;
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(SqueezeExcite);

// Cross-configuration attention: for x (K, n, H), weights softmax over the K axis of a
// projection divided by a learnable temperature (init 0.5); the weighted half is concatenated
// with the plain half. Scaled by K so that uniform weights leave values unchanged.
struct CrossConfigAttentionImpl : torch::nn::Module {
  explicit CrossConfigAttentionImpl(int h) {
    score = register_module("score", torch::nn::Linear(h, h / 2));
    value = register_module("value", torch::nn::Linear(h, h - h / 2));
    plain = register_module("plain", torch::nn::Linear(h, h / 2));
    temperature = register_parameter("temperature", torch::full({1}, 0.5));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    const auto t = temperature.abs().clamp_min(1e-2);
    const auto w = torch::softmax(score(x) / t, 0) * static_cast<double>(x.size(0));
    const auto v = value(x);
    const int64_t half = std::min(v.size(2), w.size(2));
    auto weighted = v.narrow(2, 0, half) * w.narrow(2, 0, half);
    if (v.size(2) > half) weighted = torch::cat({weighted, v.narrow(2, half, v.size(2) - half)}, 2);
    return torch::cat({plain(x), weighted}, 2);
  }
  // x (n, K, H): the three projections as one addmm; the softmax runs over the K axis (1).
  torch::Tensor forward_node_major(const torch::Tensor& x) {
    const int64_t h = x.size(2), hs = score->weight.size(0), hv = value->weight.size(0),
                  hp = plain->weight.size(0);
    const auto w_all = torch::cat({score->weight, value->weight, plain->weight});
    const auto b_all = torch::cat({score->bias, value->bias, plain->bias});
    const auto y = torch::addmm(b_all, x.view({-1, h}), w_all.t()).view({x.size(0), x.size(1), -1});
    const auto t = temperature.abs().clamp_min(1e-2);
    const double k = static_cast<double>(x.size(1));
    const auto v = y.narrow(2, hs, hv);
    const int64_t half = std::min(hv, hs);
    if (!in_place()) {
      const auto w = torch::softmax(y.narrow(2, 0, hs) / t, 1) * k;
      std::vector<torch::Tensor> parts = {y.narrow(2, hs + hv, hp),
                                          v.narrow(2, 0, half) * w.narrow(2, 0, half)};
      if (hv > half) parts.push_back(v.narrow(2, half, hv - half));
      return torch::cat(parts, 2);
    }
    const auto w = torch::softmax(y.narrow(2, 0, hs) / t, 1).mul_(k);
    auto out = torch::empty({x.size(0), x.size(1), hp + hv});
    out.narrow(2, 0, hp).copy_(y.narrow(2, hs + hv, hp));
    auto weighted = out.narrow(2, hp, half);
    torch::mul_out(weighted, v.narrow(2, 0, half), w.narrow(2, 0, half));
    if (hv > half) out.narrow(2, hp + half, hv - half).copy_(v.narrow(2, half, hv - half));
    return out;
  }
  torch::nn::Linear score{nullptr}, value{nullptr}, plain{nullptr};
  torch::Tensor temperature;
};
TORCH_MODULE(CrossConfigAttention);

class TGraph : public Network {
 public:
  // with_head = false: no scoring head; embed gives the pooled features (tgraph-ast reads them).
  TGraph(const ModelOptions& o, const ModelDims& d, const Normalizer& norm, bool with_head = true)
      : o_(o) {
    enc_ = register_module("encoder",
                           InputEncoder(d, norm, o.hidden, o.opcode_dim, true, o.config_embed_dim));
    norm_ = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.hidden})));
    se_ = register_module("se", SqueezeExcite(o.hidden));
    if (o.cross_attention)
      att_ = register_module("cross_attention", CrossConfigAttention(o.hidden));
    for (int l = 0; l < o.layers; ++l)
      blocks_.push_back(register_module("sage" + std::to_string(l), SageBlock(o.hidden)));
    if (with_head) head_ = register_module("head", torch::nn::Linear(embed_width(), 1));
  }
  int64_t embed_width() const { return o_.config_pool ? 2 * o_.hidden : o_.hidden; }
  // The pooled features of each configuration (K, embed_width()): the reference formulation
  // and the node-major one.
  torch::Tensor reference_embed(const GraphInput& g, const torch::Tensor& configs) {
    auto x = se_(norm_(enc_->forward(g, configs)));
    if (att_) x = att_(x);
    x = torch::gelu(x);
    for (auto& b : blocks_) x = b->forward(g, x);
    return readout(g, x, 1);
  }
  torch::Tensor embed(const GraphInput& g, const torch::Tensor& configs) {
    auto x = se_->forward_node_major(norm_(enc_->forward_node_major(g, configs)));
    if (att_) x = att_->forward_node_major(x);
    x = gelu_maybe_in_place(x);
    const auto a = mean_matrix(g);
    for (auto& b : blocks_) x = b->forward_node_major(a, x);
    return readout(g, x, 0);
  }
  torch::Tensor reference_forward(const GraphInput& g, const torch::Tensor& configs) override {
    return head_(reference_embed(g, configs)).squeeze(1);
  }
  torch::Tensor forward(const GraphInput& g, const torch::Tensor& configs) override {
    return head_(embed(g, configs)).squeeze(1);
  }
  int prune_hops() const override { return o_.prune_hops; }
  double flops_per_config(const GraphInput& g) const override {
    const double n = static_cast<double>(g.num_nodes), h = o_.hidden;
    return 2 * n * h * h * o_.layers + (att_ ? 1.5 * n * h * h : 0) +
           static_cast<double>(g.src.numel()) * h * o_.layers +
           encoder_flops(g, o_.hidden, 18 * o_.config_embed_dim);
  }

 private:
  // The mean over the nodes (axis `nodes` of x), and with config_pool the mean over the
  // configurable nodes beside it.
  torch::Tensor readout(const GraphInput& g, const torch::Tensor& x, int64_t nodes) const {
    const auto all = x.mean(nodes);
    if (!o_.config_pool) return all;
    const bool has = g.config_pos.defined() && g.config_pos.numel() > 0;
    const auto configurable = has ? x.index_select(nodes, g.config_pos).mean(nodes) : all;
    return torch::cat({all, configurable}, -1);
  }

  ModelOptions o_;
  InputEncoder enc_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};
  SqueezeExcite se_{nullptr};
  CrossConfigAttention att_{nullptr};
  std::vector<SageBlock> blocks_;
  torch::nn::Linear head_{nullptr};
};

// The syntax-tree GCN (Tomczak et al.): each configuration is its own loop-nest tree; node kind
// embedding + numeric features, residual GCN layers over the trees of a batch (one disjoint
// graph), mean and scaled-sum readout per tree, an MLP regressing the standardised log runtime.
class AstGcn : public Network {
 public:
  // scalar_head = false: embed gives the head's hidden layer (tgraph-ast reads it).
  explicit AstGcn(const ModelOptions& o, int64_t node_feat_width, bool scalar_head = true) : o_(o) {
    kind_ = register_module("kind", torch::nn::Embedding(kAstNumKinds, o.opcode_dim));
    input_ = register_module("input", torch::nn::Linear(node_feat_width + o.opcode_dim, o.hidden));
    const int64_t extra =
        (o.work_pool ? o.hidden + 1 : 0) + (o.hand_features ? handcrafted_tree_width() : 0);
    gcn_ = register_module("gcn", ResidualGcn(o.hidden, o.layers, scalar_head, extra, o.dropout));
    if (o.tree_attention) att_ = register_module("tree_attention", CrossConfigAttention(o.hidden));
    if (o.work_pool) work_score_ = register_module("work_score", torch::nn::Linear(o.hidden, 1));
    if (o.tree_passes) {
      if (!is_tree_pass_cell(o.tree_pass_cell))
        throw InputError(fmt::format("unknown tree pass cell '{}' ({})", o.tree_pass_cell,
                                     fmt::join(tree_pass_cells(), ", ")));
      gru_ = o.tree_pass_cell == "gru";
      whole_ = o.tree_pass_whole;
      if (o.tree_pass_cell == "norm") {
        down_norm_ = register_module("pass_down_norm",
                                     torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.hidden})));
        up_norm_ = register_module("pass_up_norm",
                                   torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.hidden})));
      }
      // One addmm gives each node's own terms of both passes (a GRU's three gates each); a
      // further one per level reads the parent's (down) or the children's (up) state.
      const int64_t terms = (gru_ ? 3 : 1) * o.hidden;
      self_ = register_module("pass_self", torch::nn::Linear(o.hidden, 2 * terms));
      from_parent_ = register_module(
          "pass_parent", torch::nn::Linear(torch::nn::LinearOptions(o.hidden, terms).bias(false)));
      from_children_ =
          register_module("pass_children",
                          torch::nn::Linear(torch::nn::LinearOptions(o.hidden, terms).bias(false)));
    }
  }
  torch::Tensor forward(const GraphInput& g, const torch::Tensor& configs) override {
    const auto p = pooled(g, configs.size(0));
    return gcn_->head(p.mean, p.scaled_sum, p.extra);
  }
  // The head's hidden layer for each of the k trees (k, hidden).
  torch::Tensor embed(const GraphInput& g, int64_t k) {
    const auto p = pooled(g, k);
    return gcn_->head_hidden(p.mean, p.scaled_sum, p.extra);
  }
  double flops_per_config(const GraphInput& g) const override {
    const double trees = std::max<double>(
        1, static_cast<double>(g.tree_id.numel() > 0 ? g.tree_id.max().item<int64_t>() + 1 : 1));
    const double n = static_cast<double>(g.num_nodes) / trees, h = o_.hidden;
    return n * h * h * o_.layers + n * h * h + (att_ ? 1.5 * h * h : 0) +
           (work_score_ ? 3 * n * h : 0) + (self_ ? (gru_ ? 12 : 4) * n * h * h : 0);
  }

 private:
  struct Pooled {
    // extra: the work pool's features, then the hand-crafted ones; undefined without either.
    torch::Tensor mean, scaled_sum, extra;
  };
  // Per tree: the mean of its nodes' features (read beside the other trees' with tree
  // attention), their sum scaled by 1/sqrt(count), with work_pool the attention pool, and with
  // hand_features the trees' hand-crafted features.
  Pooled pooled(const GraphInput& g, int64_t k) {
    auto x = gcn_->drop(torch::relu(input_(torch::cat({g.node_feat, kind_(g.opcode)}, 1))));
    if (self_) x = x + tree_passes(g, x);
    const auto h = gcn_->propagate(g, x.unsqueeze(0)).squeeze(0);
    // Readout per tree; each tree's node count, counted once for both readouts.
    const auto nodes = torch::bincount(g.tree_id, {}, k);  // (k) int64
    const auto count = nodes.to(torch::kFloat32).clamp_min(1).unsqueeze(1);
    const auto sum = torch::zeros({k, h.size(1)}).index_add(0, g.tree_id, h);
    auto mean = sum / count;
    if (att_) mean = att_->forward(mean.unsqueeze(1)).squeeze(1);  // (K, 1, H): across the K
    Pooled out{mean, sum / count.sqrt(), {}};
    if (work_score_) out.extra = work_pool(g, h, nodes);
    if (o_.hand_features) {
      if (!g.hand.defined() || g.hand.size(0) != k)
        throw InputError(
            "this model reads the trees' hand-crafted features, which the batch lacks (a "
            "normaliser without their statistics)");
      out.extra = out.extra.defined() ? torch::cat({out.extra, g.hand}, 1) : g.hand;
    }
    return out;
  }
  // Softmax of a learned score over each tree's nodes, the features pooled with those weights,
  // and the log-sum-exp of the scores (k, H + 1). The trees' nodes are contiguous, in tree
  // order (prepare_ast_batch), so that each tree's largest score is a row maximum of the
  // scores laid out as (k, largest tree). count: each tree's node count (k) int64.
  torch::Tensor work_pool(const GraphInput& g, const torch::Tensor& h, const torch::Tensor& count) {
    const auto s = work_score_(h).squeeze(1);  // (n)
    const int64_t n = g.num_nodes, k = count.size(0);
    if (n > 1 && (g.tree_id.narrow(0, 1, n - 1) < g.tree_id.narrow(0, 0, n - 1)).any().item<bool>())
      throw InputError("syntax-tree batch: the trees' nodes are not contiguous in tree order");
    const auto first = count.cumsum(0) - count;
    const auto pos = torch::arange(n, torch::kInt64) - first.index_select(0, g.tree_id);
    const auto top = torch::full({k, std::max<int64_t>(1, count.max().item<int64_t>())}, -1e30f)
                         .index_put_({g.tree_id, pos}, s.detach())
                         .amax(1);
    const auto e = torch::exp(s - top.index_select(0, g.tree_id));
    const auto total = torch::zeros({k}).index_add(0, g.tree_id, e).clamp_min(1e-30);
    const auto w = e / total.index_select(0, g.tree_id);
    const auto pooled = torch::zeros({k, h.size(1)}).index_add(0, g.tree_id, h * w.unsqueeze(1));
    return torch::cat({pooled, (total.log() + top).unsqueeze(1)}, 1);
  }

  // The down and up passes over the trees (ModelOptions::tree_passes), their states summed
  // (n, H), level by level as GraphInput::tree_levels orders the nodes.
  torch::Tensor tree_passes(const GraphInput& g, const torch::Tensor& x) {
    const size_t depth = g.tree_levels.size();
    if (depth == 0 || !g.tree_unlevel.defined() || !g.tree_order.defined() ||
        g.tree_children.size() != depth)
      throw InputError("syntax-tree batch: no tree levels (prepare_ast_batch makes them)");
    // Each node's own terms (n, 2T): the down pass's, then the up pass's; in level order, cut
    // into levels by one split, whose gradient is one concatenation (a gather per level would
    // give each level's gradient the size of all the nodes, which made training with the GRU
    // cell mostly page faults).
    std::vector<int64_t> sizes(depth);
    for (size_t d = 0; d < depth; ++d) sizes[d] = g.tree_levels[d].size(0);
    const auto own_at = self_(x).index_select(0, g.tree_order).split_with_sizes(sizes);
    const int64_t terms = own_at[0].size(1) / 2, h = x.size(1);
    std::vector<torch::Tensor> down(depth), up(depth);
    const auto down_pass = [&] {
      for (size_t d = 0; d < depth; ++d) {
        torch::Tensor above;  // the parent's state; none at the roots
        if (d > 0) above = (whole_ ? down[d - 1] + up[d - 1] : down[d - 1]);
        if (above.defined()) above = above.index_select(0, g.tree_parent[d]);
        down[d] = pass_cell(own_at[d].narrow(1, 0, terms), above, from_parent_, down_norm_);
      }
    };
    if (!whole_) down_pass();
    for (size_t d = depth; d-- > 0;) {
      torch::Tensor below;  // the mean of the children's states; none on the deepest level
      if (d + 1 < depth) {
        const auto& parent = g.tree_parent[d + 1];
        below = torch::zeros({g.tree_levels[d].size(0), h}).index_add(0, parent, up[d + 1]) /
                g.tree_children[d];
      }
      up[d] = pass_cell(own_at[d].narrow(1, terms, terms), below, from_children_, up_norm_);
    }
    if (whole_) down_pass();
    return (torch::cat(down) + torch::cat(up)).index_select(0, g.tree_unlevel);
  }
  // One step of a pass: a node's new state from its own terms and the state s it reads
  // (undefined: none, as zeros). relu: relu(own + U s); norm: relu(norm(own + U s)). gru:
  // PyTorch's GRU cell, own holding the reset, update and candidate terms of the input.
  torch::Tensor pass_cell(const torch::Tensor& own, const torch::Tensor& s, torch::nn::Linear& u,
                          torch::nn::LayerNorm& norm) {
    if (!gru_) {
      const auto pre = s.defined() ? own + u(s) : own;
      return torch::relu(norm ? norm(pre) : pre);
    }
    const int64_t h = own.size(1) / 3;
    if (!s.defined())
      return (1 - torch::sigmoid(own.narrow(1, h, h))) * torch::tanh(own.narrow(1, 2 * h, h));
    const auto us = u(s);
    const auto reset = torch::sigmoid(own.narrow(1, 0, h) + us.narrow(1, 0, h));
    const auto update = torch::sigmoid(own.narrow(1, h, h) + us.narrow(1, h, h));
    const auto candidate = torch::tanh(own.narrow(1, 2 * h, h) + reset * us.narrow(1, 2 * h, h));
    return (1 - update) * candidate + update * s;
  }

  ModelOptions o_;
  torch::nn::Embedding kind_{nullptr};
  torch::nn::Linear input_{nullptr};
  ResidualGcn gcn_{nullptr};
  CrossConfigAttention att_{nullptr};
  torch::nn::Linear work_score_{nullptr};
  torch::nn::Linear self_{nullptr}, from_parent_{nullptr}, from_children_{nullptr};
  torch::nn::LayerNorm down_norm_{nullptr}, up_norm_{nullptr};  // the "norm" cell's
  bool gru_ = false;    // the passes' cell (ModelOptions::tree_pass_cell)
  bool whole_ = false;  // ModelOptions::tree_pass_whole
};

// TGraph and the syntax-tree GCN read together (the layout and AST views in one network): the
// layout graph's pooled TGraph features and the syntax tree's hidden head features of each
// configuration, concatenated, scored by an MLP; both encoders are trained through it. The
// tree part has ast-gcn's defaults (width 64, 3 layers, attention across the trees).
class TGraphAst : public Network {
 public:
  static constexpr int kTreeHidden = 64, kTreeLayers = 3, kHeadHidden = 64;
  TGraphAst(const ModelOptions& o, const ModelDims& d, const Normalizer& norm) {
    graph_ = register_module("tgraph", std::make_shared<TGraph>(o, d, norm, false));
    ModelOptions t = o;
    t.hidden = kTreeHidden;
    t.layers = kTreeLayers;
    t.tree_attention = true;
    trees_ = register_module("ast", std::make_shared<AstGcn>(t, d.tree_feat_width, false));
    head1_ = register_module("head1",
                             torch::nn::Linear(graph_->embed_width() + kTreeHidden, kHeadHidden));
    head2_ = register_module("head2", torch::nn::Linear(kHeadHidden, 1));
    if (o.tree_skip) skip_ = register_module("skip", torch::nn::Linear(kTreeHidden, 1));
    dropout_ = o.dropout;
  }
  torch::Tensor forward(const GraphInput& g, const torch::Tensor& configs) override {
    return head(graph_->embed(g, configs), trees(g, configs));
  }
  torch::Tensor reference_forward(const GraphInput& g, const torch::Tensor& configs) override {
    return head(graph_->reference_embed(g, configs), trees(g, configs));
  }
  int prune_hops() const override { return graph_->prune_hops(); }
  double flops_per_config(const GraphInput& g) const override {
    return graph_->flops_per_config(g) + (g.trees ? trees_->flops_per_config(*g.trees) : 0.0) +
           static_cast<double>((graph_->embed_width() + kTreeHidden) * kHeadHidden);
  }

 private:
  torch::Tensor trees(const GraphInput& g, const torch::Tensor& configs) {
    if (!g.trees) throw InputError("tgraph-ast reads each configuration's syntax tree: none given");
    return trees_->embed(*g.trees, configs.size(0));
  }
  torch::Tensor head(const torch::Tensor& graph, const torch::Tensor& trees) {
    const auto hidden = torch::gelu(head1_(torch::cat({graph, trees}, 1)));
    const auto joint = head2_(dropout_in_training(hidden, dropout_, is_training())).squeeze(1);
    return skip_ ? joint + skip_(trees).squeeze(1) : joint;
  }

  std::shared_ptr<TGraph> graph_;
  std::shared_ptr<AstGcn> trees_;
  torch::nn::Linear head1_{nullptr}, head2_{nullptr};
  torch::nn::Linear skip_{nullptr};  // ModelOptions::tree_skip
  double dropout_ = 0;
};

}  // namespace

std::string ModelOptions::to_json() const {
  return nlohmann::json{{"name", name},
                        {"hidden", hidden},
                        {"layers", layers},
                        {"opcode_dim", opcode_dim},
                        {"config_embed_dim", config_embed_dim},
                        {"prune_hops", prune_hops},
                        {"cross_attention", cross_attention},
                        {"config_pool", config_pool},
                        {"tree_attention", tree_attention},
                        {"work_pool", work_pool},
                        {"tree_passes", tree_passes},
                        {"tree_pass_cell", tree_pass_cell},
                        {"tree_pass_whole", tree_pass_whole},
                        {"hand_features", hand_features},
                        {"tree_skip", tree_skip},
                        {"dropout", dropout},
                        {"segment_nodes", segment_nodes}}
      .dump();
}

ModelOptions ModelOptions::from_json(const std::string& text) {
  ModelOptions o;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    throw InputError(std::string("model options are not valid JSON: ") + e.what());
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    try {
      if (k == "name")
        o.name = it->get<std::string>();
      else if (k == "hidden")
        o.hidden = it->get<int>();
      else if (k == "layers")
        o.layers = it->get<int>();
      else if (k == "opcode_dim")
        o.opcode_dim = it->get<int>();
      else if (k == "config_embed_dim")
        o.config_embed_dim = it->get<int>();
      else if (k == "prune_hops")
        o.prune_hops = it->get<int>();
      else if (k == "cross_attention")
        o.cross_attention = it->get<bool>();
      else if (k == "config_pool")
        o.config_pool = it->get<bool>();
      else if (k == "tree_attention")
        o.tree_attention = it->get<bool>();
      else if (k == "work_pool")
        o.work_pool = it->get<bool>();
      else if (k == "tree_passes")
        o.tree_passes = it->get<bool>();
      else if (k == "tree_pass_cell")
        o.tree_pass_cell = it->get<std::string>();
      else if (k == "tree_pass_whole")
        o.tree_pass_whole = it->get<bool>();
      else if (k == "hand_features")
        o.hand_features = it->get<bool>();
      else if (k == "tree_skip")
        o.tree_skip = it->get<bool>();
      else if (k == "dropout")
        o.dropout = it->get<double>();
      else if (k == "segment_nodes")
        o.segment_nodes = it->get<int64_t>();
      else
        throw InputError(fmt::format("unknown model option '{}'", k));
    } catch (const nlohmann::json::exception& e) {
      throw InputError(fmt::format("model option '{}': {}", k, e.what()));
    }
  }
  return o;
}

ModelOptions ModelOptions::resolved() const {
  ModelOptions o = *this;
  if (o.name == "gcn-baseline") {
    if (o.hidden == 0) o.hidden = 32;
  } else if (o.name == "sage") {
    if (o.hidden == 0) o.hidden = 64;
  } else if (o.name == "ast-gcn") {
    if (o.hidden == 0) o.hidden = 64;
    if (o.layers == 0) o.layers = 3;
  } else if (o.name == "tgraph" || o.name == "tgraph-ast") {
    if (o.hidden == 0) o.hidden = 128;
    if (o.prune_hops == -2) o.prune_hops = 1;
  }
  if (o.layers == 0) o.layers = 2;
  if (o.prune_hops == -2) o.prune_hops = -1;
  if (o.hidden < 4 || o.hidden > 4096)
    throw UsageError(fmt::format("hidden = {}: expected 4..4096", o.hidden));
  if (o.layers < 0 || o.layers > 16)
    throw UsageError(fmt::format("layers = {}: expected 0..16", o.layers));
  if (o.opcode_dim < 1 || o.config_embed_dim < 1)
    throw UsageError("embedding widths must be positive");
  return o;
}

torch::Tensor Network::score(const GraphInput& graph, const torch::Tensor& configs) {
  c10::InferenceMode guard;
  return forward(graph, configs);
}

torch::Tensor Network::reference_forward(const GraphInput& graph, const torch::Tensor& configs) {
  return forward(graph, configs);
}

std::vector<std::string> model_names() { return {"gcn-baseline", "sage", "tgraph"}; }

ModelDims dims_of(const Normalizer& norm) {
  return {norm.collection, norm.node_feat_width, norm.config_feat_width,
          norm.trees ? norm.trees->node_feat_width : 0};
}

std::shared_ptr<Network> make_model(const ModelOptions& options, const ModelDims& dims,
                                    const Normalizer& norm) {
  const ModelOptions o = options.resolved();
  if (o.name == "gcn-baseline") return std::make_shared<GcnBaseline>(o, dims, norm);
  if (o.name == "sage") return std::make_shared<Sage>(o, dims, norm);
  if (o.name == "tgraph") return std::make_shared<TGraph>(o, dims, norm);
  if (o.name == "ast-gcn") {
    if (dims.collection != Collection::kAst)
      throw UsageError("ast-gcn trains on syntax-tree (ast) datasets");
    return std::make_shared<AstGcn>(o, dims.node_feat_width);
  }
  if (o.name == "tgraph-ast") {
    if (dims.collection != Collection::kLayout || dims.tree_feat_width <= 0) {
      throw UsageError(
          "tgraph-ast reads layout graphs and their syntax trees side by side (a data root with "
          "layout/ and ast/)");
    }
    return std::make_shared<TGraphAst>(o, dims, norm);
  }
  if (dims.collection == Collection::kAst)
    throw UsageError(fmt::format("{} does not read syntax trees; use ast-gcn", o.name));
  throw UsageError(fmt::format(
      "unknown model '{}': expected gcn-baseline, sage, tgraph, tgraph-ast, ast-gcn or xgb",
      o.name));
}

}  // namespace tcost::model
