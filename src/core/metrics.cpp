#include "core/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"

namespace tcost {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int64_t tie_pairs(int64_t run) { return run * (run - 1) / 2; }

// Sorts v with a stable merge sort and returns the number of inversions (pairs i < j with
// v[i] > v[j]); equal elements are not inversions.
int64_t merge_count(std::vector<double>& v, std::vector<double>& buf, size_t lo, size_t hi) {
  if (hi - lo < 2) return 0;
  const size_t mid = lo + (hi - lo) / 2;
  int64_t swaps = merge_count(v, buf, lo, mid) + merge_count(v, buf, mid, hi);
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (v[j] < v[i]) {
      swaps += static_cast<int64_t>(mid - i);
      buf[k++] = v[j++];
    } else {
      buf[k++] = v[i++];
    }
  }
  while (i < mid) buf[k++] = v[i++];
  while (j < hi) buf[k++] = v[j++];
  std::copy(buf.begin() + static_cast<int64_t>(lo), buf.begin() + static_cast<int64_t>(hi),
            v.begin() + static_cast<int64_t>(lo));
  return swaps;
}

}  // namespace

PairCounts count_pairs(const std::vector<double>& pred, const std::vector<double>& truth) {
  TCOST_CHECK(pred.size() == truth.size(), "pred has {} values, truth {}", pred.size(),
              truth.size());
  const size_t n = pred.size();
  PairCounts c;
  c.pairs = static_cast<int64_t>(n) * static_cast<int64_t>(n > 0 ? n - 1 : 0) / 2;
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return pred[a] < pred[b] || (pred[a] == pred[b] && truth[a] < truth[b]);
  });
  // Ties in pred, and joint ties, from runs in the sorted order.
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && pred[order[j]] == pred[order[i]]) ++j;
    c.tied_pred += tie_pairs(static_cast<int64_t>(j - i));
    for (size_t a = i; a < j;) {
      size_t b = a + 1;
      while (b < j && truth[order[b]] == truth[order[a]]) ++b;
      c.tied_both += tie_pairs(static_cast<int64_t>(b - a));
      a = b;
    }
    i = j;
  }
  // Truth in pred order: its inversions are the discordant pairs.
  std::vector<double> t(n), buf(n);
  for (size_t i = 0; i < n; ++i) t[i] = truth[order[i]];
  c.discordant = merge_count(t, buf, 0, n);
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && t[j] == t[i]) ++j;
    c.tied_truth += tie_pairs(static_cast<int64_t>(j - i));
    i = j;
  }
  return c;
}

double kendall_tau_b(const std::vector<double>& pred, const std::vector<double>& truth) {
  const PairCounts c = count_pairs(pred, truth);
  const double denom = std::sqrt(static_cast<double>(c.pairs - c.tied_pred)) *
                       std::sqrt(static_cast<double>(c.pairs - c.tied_truth));
  if (denom == 0) return kNaN;
  // Rounding in the square roots can push a perfect ordering a hair past 1.
  return std::clamp(static_cast<double>(c.concordant() - c.discordant) / denom, -1.0, 1.0);
}

double ordered_pair_accuracy(const std::vector<double>& pred, const std::vector<double>& truth) {
  const PairCounts c = count_pairs(pred, truth);
  const int64_t judged = c.pairs - c.tied_truth;
  if (judged == 0) return kNaN;
  const double tied_pred_only = static_cast<double>(c.tied_pred - c.tied_both);
  return (static_cast<double>(c.concordant()) + 0.5 * tied_pred_only) / static_cast<double>(judged);
}

double slowdown_at_k(const std::vector<double>& pred, const std::vector<double>& truth, int64_t k) {
  TCOST_CHECK(pred.size() == truth.size() && !pred.empty(), "bad sizes {} {}", pred.size(),
              truth.size());
  TCOST_CHECK(k >= 1, "k = {}", k);
  std::vector<size_t> order(pred.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t top = std::min<size_t>(static_cast<size_t>(k), order.size());
  // Ties in pred are broken by index, so that the result does not depend on the sort.
  std::partial_sort(
      order.begin(), order.begin() + static_cast<int64_t>(top), order.end(),
      [&](size_t a, size_t b) { return pred[a] < pred[b] || (pred[a] == pred[b] && a < b); });
  double best_top = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < top; ++i) best_top = std::min(best_top, truth[order[i]]);
  const double best = *std::min_element(truth.begin(), truth.end());
  return best_top / best - 1.0;
}

double kendall_tau_b_brute(const std::vector<double>& pred, const std::vector<double>& truth) {
  int64_t con = 0, dis = 0, tp = 0, tt = 0, pairs = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    for (size_t j = i + 1; j < pred.size(); ++j) {
      ++pairs;
      const double a = pred[i] - pred[j], b = truth[i] - truth[j];
      if (a == 0) ++tp;
      if (b == 0) ++tt;
      if (a != 0 && b != 0) ((a > 0) == (b > 0) ? con : dis)++;
    }
  }
  const double denom = std::sqrt(static_cast<double>(pairs - tp) * static_cast<double>(pairs - tt));
  return denom == 0 ? kNaN : static_cast<double>(con - dis) / denom;
}

double ordered_pair_accuracy_brute(const std::vector<double>& pred,
                                   const std::vector<double>& truth) {
  double good = 0;
  int64_t judged = 0;
  for (size_t i = 0; i < pred.size(); ++i) {
    for (size_t j = i + 1; j < pred.size(); ++j) {
      if (truth[i] == truth[j]) continue;
      ++judged;
      if (pred[i] == pred[j]) {
        good += 0.5;
      } else if ((pred[i] < pred[j]) == (truth[i] < truth[j])) {
        good += 1;
      }
    }
  }
  return judged == 0 ? kNaN : good / static_cast<double>(judged);
}

double mean_ignoring_nan(const std::vector<double>& values) {
  double sum = 0;
  int64_t n = 0;
  for (double v : values) {
    if (!std::isnan(v)) {
      sum += v;
      ++n;
    }
  }
  return n == 0 ? kNaN : sum / static_cast<double>(n);
}

}  // namespace tcost
