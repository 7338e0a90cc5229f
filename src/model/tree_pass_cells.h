// The cells of the syntax-tree models' passes (ModelOptions::tree_pass_cell), one list for the
// model, training's option check and the CLI. No LibTorch here: the CLI includes it.
#pragma once

#include <string>
#include <vector>

namespace tcost::model {

// relu: relu(A x + U s); gru: a GRU cell's gated update of s; norm: relu(LN(A x + U s)).
inline const std::vector<std::string>& tree_pass_cells() {
  static const std::vector<std::string> kCells = {"relu", "gru", "norm"};
  return kCells;
}

inline bool is_tree_pass_cell(const std::string& name) {
  for (const auto& c : tree_pass_cells())
    if (c == name) return true;
  return false;
}

}  // namespace tcost::model
