// Ranking and regression losses over the K configurations of one graph.
// `cost` is the model's output (higher = slower), `target` the measured runtime (or ratio).
//   listmle_loss  - ListMLE: negative log-likelihood of the true fastest-first permutation
//                   under a Plackett-Luce model with scores -cost.
//   hinge_loss    - mean over ordered pairs (t_i < t_j) of max(0, margin - (cost_j - cost_i)).
//   hinge_gap_loss - hinge_loss with each pair weighted by |log t_j - log t_i|: pairs whose
//                   runtimes differ by less than the measurement noise hardly count.
//   hinge_log_loss - mean over ordered pairs of max(0, margin * |log t_j - log t_i| - (cost_j -
//                   cost_i)): every pair counts alike, and each must be parted by its own log
//                   runtime gap (a pair 1.1x apart by 0.1, one 8x apart by 2.1), so that costs
//                   are spaced like log runtimes where they are ordered wrong or too close.
//   hinge_top_loss - hinge_loss with each pair weighted by its DCG change |1/log2(2 + r_i) -
//                   1/log2(2 + r_j)| (r: rank by runtime, 0 = fastest): pairs near the top count
//                   most, as in LambdaRank.
//   listnet_loss  - ListNet's top-one cross-entropy: the model's softmax(-cost) against the
//                   target distribution softmax(-log t / temperature), so that the loss is about
//                   which configurations are fastest; with temperature 0.1 a configuration 10%
//                   slower than another gets about 0.39 of its weight, one 2x slower 0.001.
//   mse_loss      - mean squared error between cost and the standardised log target.
#pragma once

#include <torch/torch.h>

#include <string>

namespace tcost::train {

torch::Tensor listmle_loss(const torch::Tensor& cost, const torch::Tensor& target);
torch::Tensor hinge_loss(const torch::Tensor& cost, const torch::Tensor& target, double margin);
torch::Tensor hinge_gap_loss(const torch::Tensor& cost, const torch::Tensor& target, double margin);
torch::Tensor hinge_log_loss(const torch::Tensor& cost, const torch::Tensor& target, double margin);
torch::Tensor hinge_top_loss(const torch::Tensor& cost, const torch::Tensor& target, double margin);
torch::Tensor listnet_loss(const torch::Tensor& cost, const torch::Tensor& target,
                           double temperature = 0.1);
torch::Tensor mse_loss(const torch::Tensor& cost, const torch::Tensor& target, double log_mean,
                       double log_std);

}  // namespace tcost::train
