// Ranking metrics of the field. Conventions: `pred` is a predicted cost (lower = predicted
// faster), `truth` a measured runtime or runtime ratio (lower = faster).
//   kendall_tau_b     - tau-b with ties, O(c log c) (Knight's algorithm). NaN when either side
//                       is constant (tau is undefined), as scipy returns.
//   ordered_pair_accuracy - of the pairs whose truths differ, the fraction ordered alike by pred;
//                       pairs tied in pred count one half. NaN when all truths are tied.
//   slowdown_at_k     - best truth among pred's k lowest / best truth overall - 1 (>= 0).
//   rank_positions    - positions from an ordering (fastest first), for scoring submissions.
//   mean_ignoring_nan - a mean over graphs that skips undefined values.
#pragma once

#include <cstdint>
#include <vector>

namespace tcost {

// The four counts that tau-b and OPA derive from.
struct PairCounts {
  int64_t pairs = 0;       // n(n-1)/2
  int64_t tied_pred = 0;   // pairs tied in pred
  int64_t tied_truth = 0;  // pairs tied in truth
  int64_t tied_both = 0;   // pairs tied in both
  int64_t discordant = 0;  // pairs ordered oppositely (neither tied)
  int64_t concordant() const { return pairs - tied_pred - tied_truth + tied_both - discordant; }
};

PairCounts count_pairs(const std::vector<double>& pred, const std::vector<double>& truth);
double kendall_tau_b(const std::vector<double>& pred, const std::vector<double>& truth);
double ordered_pair_accuracy(const std::vector<double>& pred, const std::vector<double>& truth);
double slowdown_at_k(const std::vector<double>& pred, const std::vector<double>& truth, int64_t k);

// O(c^2) reference versions, for tests.
double kendall_tau_b_brute(const std::vector<double>& pred, const std::vector<double>& truth);
double ordered_pair_accuracy_brute(const std::vector<double>& pred,
                                   const std::vector<double>& truth);

double mean_ignoring_nan(const std::vector<double>& values);

}  // namespace tcost
