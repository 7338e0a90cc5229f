#include "model/handcrafted.h"

#include <algorithm>
#include <cmath>

#include "core/opcodes.h"

namespace tcost::model {
namespace {

// Opcode families counted as fractions of all nodes.
constexpr int kFamilies[] = {op::kConvolution, op::kDot,      op::kReduce,    op::kReduceWindow,
                             op::kTranspose,   op::kReshape,  op::kBroadcast, op::kCopy,
                             op::kAdd,         op::kMultiply, op::kParameter, op::kFusion};
constexpr int kNumFamilies = static_cast<int>(sizeof(kFamilies) / sizeof(kFamilies[0]));
constexpr int kGraphWidth = 3 + kNumFamilies + 2;
constexpr int kSlotValues = 7;  // -1..5
constexpr int kLayoutWidth = 18 * kSlotValues + 3 + 1;
constexpr int kTileWidth = 24 * 2 + 6;

int rank_of(const Graph& g, int64_t node) {
  const float* f = &g.node_feat[static_cast<size_t>(node) * g.node_feat_width];
  int r = 0;
  if (g.node_feat_width > node_feat::kShapeDimsBegin + 6) {
    for (int k = 0; k < 6; ++k) r += f[node_feat::kShapeDimsBegin + k] > 0;
  }
  return r;
}

double log_elems(const Graph& g, int64_t node) {
  if (g.node_feat_width <= node_feat::kShapeProduct) return 0;
  return std::log1p(std::max(
      0.0f, g.node_feat[static_cast<size_t>(node) * g.node_feat_width + node_feat::kShapeProduct]));
}

bool is_row_major(const float* layout, int rank) {
  if (rank == 0) return true;
  for (int k = 0; k < rank && k < 6; ++k) {
    if (static_cast<int>(layout[k]) != rank - 1 - k) return false;
  }
  return true;
}

}  // namespace

int handcrafted_width(Collection c) {
  return kGraphWidth + (c == Collection::kLayout ? kLayoutWidth : kTileWidth);
}

std::vector<float> handcrafted_features(const Graph& g) {
  const int w = handcrafted_width(g.collection);
  std::vector<float> graph_part(kGraphWidth, 0.0f);
  graph_part[0] = static_cast<float>(std::log1p(g.num_nodes));
  graph_part[1] = static_cast<float>(std::log1p(g.num_edges()));
  graph_part[2] = static_cast<float>(std::log1p(g.num_config_nodes()));
  double sum_log = 0, max_log = 0;
  for (int64_t i = 0; i < g.num_nodes; ++i) {
    for (int k = 0; k < kNumFamilies; ++k) graph_part[3 + k] += g.node_opcode[i] == kFamilies[k];
    const double l = log_elems(g, i);
    sum_log += l;
    max_log = std::max(max_log, l);
  }
  for (int k = 0; k < kNumFamilies; ++k) graph_part[3 + k] /= static_cast<float>(g.num_nodes);
  graph_part[3 + kNumFamilies] = static_cast<float>(sum_log / static_cast<double>(g.num_nodes));
  graph_part[4 + kNumFamilies] = static_cast<float>(max_log);

  std::vector<float> out(static_cast<size_t>(g.num_configs) * w, 0.0f);
  // Edges between two configurable nodes: (consumer position, producer position).
  std::vector<int> pos(static_cast<size_t>(g.num_nodes), -1);
  for (int64_t j = 0; j < g.num_config_nodes(); ++j)
    pos[g.config_node_ids[j]] = static_cast<int>(j);
  std::vector<std::pair<int, int>> config_edges;
  for (int64_t e = 0; e < g.num_edges(); ++e) {
    const int u = pos[g.edges[2 * e]], v = pos[g.edges[2 * e + 1]];
    if (u >= 0 && v >= 0) config_edges.emplace_back(u, v);
  }
  for (int64_t c = 0; c < g.num_configs; ++c) {
    float* row = &out[static_cast<size_t>(c) * w];
    std::copy(graph_part.begin(), graph_part.end(), row);
    float* f = row + kGraphWidth;
    const float* cfg = g.config(c);
    if (g.collection == Collection::kTile) {
      for (int k = 0; k < 24 && k < g.config_feat_width; ++k) {
        f[k] = cfg[k];
        f[24 + k] = static_cast<float>(std::log1p(std::max(0.0f, cfg[k])));
      }
      // Tiles per output dim, from the root's shape and the output tile (slots 8..13).
      const int64_t root = g.num_nodes - 1;
      for (int k = 0; k < 6 && g.config_feat_width >= 14; ++k) {
        const float dim = g.node_feat_width > node_feat::kShapeDimsBegin + k
                              ? g.node_feat[static_cast<size_t>(root) * g.node_feat_width +
                                            node_feat::kShapeDimsBegin + k]
                              : 0.0f;
        const float t = cfg[8 + k];
        f[48 + k] = t > 0 && dim > 0 ? std::ceil(dim / t) : 0.0f;
      }
      continue;
    }
    const int64_t nc = g.num_config_nodes(), cw = g.config_feat_width;
    if (nc == 0) continue;
    double total_w = 0, row_major[3] = {0, 0, 0};
    for (int64_t j = 0; j < nc; ++j) {
      const float* l = cfg + j * cw;
      for (int s = 0; s < 18 && s < cw; ++s) {
        const int v = std::clamp(static_cast<int>(l[s]), -1, kSlotValues - 2);
        f[s * kSlotValues + v + 1] += 1.0f / static_cast<float>(nc);
      }
      const double weight = 1.0 + log_elems(g, g.config_node_ids[j]);
      total_w += weight;
      const int r = rank_of(g, g.config_node_ids[j]);
      for (int t = 0; t < 3 && 6 * t + 6 <= cw; ++t) {
        // Input/kernel ranks are unknown here: count the layout's own length.
        int len = 0;
        while (len < 6 && l[6 * t + len] >= 0) ++len;
        row_major[t] += weight * is_row_major(l + 6 * t, t == 0 ? r : len);
      }
    }
    for (int t = 0; t < 3; ++t)
      f[18 * kSlotValues + t] = static_cast<float>(row_major[t] / total_w);
    int mismatched = 0;
    for (const auto& [u, v] : config_edges) {
      mismatched += !std::equal(cfg + v * cw, cfg + v * cw + 6, cfg + u * cw + 6);
    }
    f[18 * kSlotValues + 3] = config_edges.empty() ? 0.0f
                                                   : static_cast<float>(mismatched) /
                                                         static_cast<float>(config_edges.size());
  }
  return out;
}

}  // namespace tcost::model
