// Losses, one optimiser step, and chunked prediction (step.h, losses.h).
#include "train/step.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "train/api.h"
#include "train/chunking.h"
#include "train/losses.h"

namespace tcost::train {

torch::Tensor listmle_loss(const torch::Tensor& cost, const torch::Tensor& target) {
  const auto order = std::get<1>(target.sort(0, /*descending=*/false));  // fastest first
  const auto s = (-cost).index_select(0, order);
  // log sum_{j >= i} exp(s_j), for every i: a reversed cumulative log-sum-exp.
  const auto tail = torch::logcumsumexp(s.flip(0), 0).flip(0);
  return (tail - s).mean();
}

namespace {

// (K, K): [i][j] = 1 where configuration i is faster than j, in cost's dtype.
torch::Tensor faster_pairs(const torch::Tensor& cost, const torch::Tensor& target) {
  return (target.unsqueeze(1) < target.unsqueeze(0)).to(cost.dtype());
}

// max(0, margin - (cost_j - cost_i)) over the pairs, each weighted by w [i][j] (0 where i is not
// faster than j), normalised by the total weight (the number of pairs when w is faster_pairs).
// The margin is one for all pairs (0-dim) or each pair's own ([i][j], (K, K)).
torch::Tensor weighted_hinge(const torch::Tensor& cost, const torch::Tensor& w,
                             const torch::Tensor& margin) {
  const auto diff = cost.unsqueeze(0) - cost.unsqueeze(1);  // [i][j] = cost_j - cost_i
  return (torch::relu(margin - diff) * w).sum() / w.sum().clamp_min(1e-12);
}

torch::Tensor weighted_hinge(const torch::Tensor& cost, const torch::Tensor& w, double margin) {
  return weighted_hinge(cost, w, torch::scalar_tensor(margin, cost.dtype()));
}

// (K, K): [i][j] = |log t_j - log t_i|, in cost's dtype.
torch::Tensor log_gaps(const torch::Tensor& cost, const torch::Tensor& target) {
  const auto log_t = target.log();
  return (log_t.unsqueeze(0) - log_t.unsqueeze(1)).abs().to(cost.dtype());
}

}  // namespace

torch::Tensor hinge_loss(const torch::Tensor& cost, const torch::Tensor& target, double margin) {
  return weighted_hinge(cost, faster_pairs(cost, target), margin);
}

torch::Tensor hinge_gap_loss(const torch::Tensor& cost, const torch::Tensor& target,
                             double margin) {
  return weighted_hinge(cost, faster_pairs(cost, target) * log_gaps(cost, target), margin);
}

torch::Tensor hinge_log_loss(const torch::Tensor& cost, const torch::Tensor& target,
                             double margin) {
  return weighted_hinge(cost, faster_pairs(cost, target), margin * log_gaps(cost, target));
}

torch::Tensor hinge_top_loss(const torch::Tensor& cost, const torch::Tensor& target,
                             double margin) {
  // rank 0 = fastest; gain 1/log2(2 + rank), as in DCG.
  const auto order = std::get<1>(target.sort(0, /*descending=*/false));
  const auto rank = torch::empty_like(order).scatter_(0, order, torch::arange(order.size(0)));
  const auto gain = 1.0 / torch::log2(rank.to(torch::kFloat64) + 2.0);
  const auto change = (gain.unsqueeze(0) - gain.unsqueeze(1)).abs().to(cost.dtype());
  return weighted_hinge(cost, faster_pairs(cost, target) * change, margin);
}

torch::Tensor listnet_loss(const torch::Tensor& cost, const torch::Tensor& target,
                           double temperature) {
  const auto p = torch::softmax(-target.log() / temperature, 0).to(cost.dtype());
  return -(p * torch::log_softmax(-cost, 0)).sum();
}

torch::Tensor mse_loss(const torch::Tensor& cost, const torch::Tensor& target, double log_mean,
                       double log_std) {
  const auto y = ((target.log() - log_mean) / log_std).to(cost.dtype());
  return (cost - y).pow(2).mean();
}

std::string resolve_loss(const std::string& loss, const std::string& model) {
  if (loss == "auto") {
    return model == "tgraph"                             ? "hinge"
           : model == "ast-gcn" || model == "tgraph-ast" ? "hinge-log"
                                                         : "listmle";
  }
  const auto& names = loss_names();
  if (std::find(names.begin(), names.end(), loss) != names.end()) return loss;
  throw UsageError(
      fmt::format("--loss: expected one of {}, found '{}'", fmt::join(names, ", "), loss));
}

int resolve_epochs(int epochs, const std::string& model) {
  if (epochs != 0) return epochs;
  return model == "ast-gcn" || model == "tgraph-ast" ? 80 : 40;
}

double resolve_lr(double lr, const std::string& model) {
  if (lr != 0) return lr;
  return model == "ast-gcn" || model == "tgraph-ast" ? 2e-3 : 1e-3;
}

bool resolve_work_pool(int work_pool, const std::string& model) {
  if (work_pool >= 0) return work_pool != 0;
  return model == "tgraph-ast" || model == "ast-gcn";
}

bool resolve_tree_passes(int tree_passes, const std::string& model) {
  if (tree_passes >= 0) return tree_passes != 0;
  return model == "ast-gcn" || model == "tgraph-ast";
}

torch::Tensor batch_loss(const torch::Tensor& cost, const model::PreparedGraph& batch,
                         const model::Normalizer& norm, const StepOptions& o) {
  if (o.loss == "listmle") return listmle_loss(cost, batch.targets);
  if (o.loss == "hinge") return hinge_loss(cost, batch.targets, o.margin);
  if (o.loss == "hinge-gap") return hinge_gap_loss(cost, batch.targets, o.margin);
  if (o.loss == "hinge-log") return hinge_log_loss(cost, batch.targets, o.margin);
  if (o.loss == "hinge-top") return hinge_top_loss(cost, batch.targets, o.margin);
  if (o.loss == "listnet") return listnet_loss(cost, batch.targets);
  if (o.loss == "mse")
    return mse_loss(cost, batch.targets, norm.log_target_mean, norm.log_target_std);
  throw UsageError(fmt::format("loss '{}' is not a training loss", o.loss));
}

double accumulate_gradients(model::Network& m, const model::PreparedGraph& batch,
                            const model::Normalizer& norm, const StepOptions& o, double scale) {
  m.train();
  const auto cost = m.forward(batch.input, batch.configs);
  const auto loss = batch_loss(cost, batch, norm, o);
  (loss * scale).backward();
  return loss.item<double>();
}

void apply_gradients(model::Network& m, torch::optim::Optimizer& opt, const StepOptions& o) {
  for (auto& group : opt.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(o.lr);
  torch::nn::utils::clip_grad_norm_(m.parameters(), o.clip);
  opt.step();
}

double optimizer_step(model::Network& m, torch::optim::Optimizer& opt,
                      const model::PreparedGraph& batch, const model::Normalizer& norm,
                      const StepOptions& o) {
  opt.zero_grad();
  const double loss = accumulate_gradients(m, batch, norm, o, 1.0);
  apply_gradients(m, opt, o);
  return loss;
}

std::vector<double> predict_prepared(model::Network& m, const model::PreparedGraph& g,
                                     int64_t chunk, int64_t hidden, const AstSet* trees,
                                     const model::Normalizer* norm) {
  m.eval();  // score runs under inference mode
  const int64_t c = g.num_configs();
  const int64_t step = configs_per_pass(chunk, g.input.num_nodes, hidden, kInferenceBudget);
  std::vector<double> out(static_cast<size_t>(c));
  for (int64_t s = 0; s < c; s += step) {
    const int64_t len = std::min(step, c - s);
    torch::Tensor cost;
    if (trees != nullptr) {
      std::vector<int64_t> idx(static_cast<size_t>(len));
      std::iota(idx.begin(), idx.end(), s);
      const auto b = model::select_views(g, *trees, idx, *norm);
      cost = m.score(b.input, b.configs).to(torch::kFloat64).contiguous();
    } else {
      cost = m.score(g.input, g.configs.narrow(0, s, len)).to(torch::kFloat64).contiguous();
    }
    std::copy_n(cost.data_ptr<double>(), len, out.begin() + s);
  }
  return out;
}

std::vector<double> predict_ast(model::Network& m, const AstSet& set, const model::Normalizer& norm,
                                int64_t chunk) {
  m.eval();  // score runs under inference mode
  std::vector<double> out;
  for (int64_t s = 0; s < set.num_configs; s += chunk) {
    std::vector<int64_t> idx;
    for (int64_t c = s; c < std::min(set.num_configs, s + chunk); ++c) idx.push_back(c);
    const auto b = model::prepare_ast_batch(set, idx, norm);
    const auto cost = m.score(b.input, b.configs).to(torch::kFloat64).contiguous();
    out.insert(out.end(), cost.data_ptr<double>(), cost.data_ptr<double>() + cost.numel());
  }
  return out;
}

}  // namespace tcost::train
