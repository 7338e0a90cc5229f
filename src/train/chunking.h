// How many configurations share one forward pass. Activations are K x nodes x hidden floats;
// keeping them near the CPU caches (a few MB) is several times faster than one huge pass
// (measured by `tcost bench`), and bounds memory whatever the number of configurations.
#pragma once

#include <algorithm>
#include <cstdint>

namespace tcost::train {

constexpr int64_t kInferenceBudget = int64_t{1} << 20;  // K * n * hidden at evaluation
constexpr int64_t kTrainingBudget = int64_t{1} << 25;   // K * n * hidden * 4 in a training step

inline int64_t configs_per_pass(int64_t wanted, int64_t nodes, int64_t hidden, int64_t budget) {
  const int64_t cap = std::max<int64_t>(1, budget / std::max<int64_t>(1, nodes * hidden));
  return std::max<int64_t>(1, std::min(wanted, cap));
}

}  // namespace tcost::train
