#include "model/handcrafted.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.h"
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

namespace tcost::model {
namespace {

constexpr int kTreeWidth = 83;  // the aggregates; the features are these and their differences

double log2p(double x) { return std::log2(1.0 + std::max(0.0, x)); }

// Weighted mean of values (0 when the weights sum to nothing).
struct WeightedMean {
  double sum = 0, weight = 0;
  void add(double value, double w) {
    sum += value * w;
    weight += w;
  }
  double get() const { return weight > 0 ? sum / std::max(weight, 1.0) : 0.0; }
};

// The aggregates of one configuration's tree: nodes [begin, end) of s, edges [ebegin, eend).
void tree_aggregates(const AstSet& s, int64_t begin, int64_t end, int64_t ebegin, int64_t eend,
                     float* out) {
  const int64_t n = end - begin;
  const int fw = s.node_feat_width;
  auto feat = [&](int64_t i, int k) {
    return static_cast<double>(s.feats[static_cast<size_t>((begin + i) * fw + k)]);
  };
  auto kind = [&](int64_t i) { return s.kinds[static_cast<size_t>(begin + i)]; };
  std::vector<int64_t> parent(static_cast<size_t>(n), -1);
  for (int64_t e = ebegin; e < eend; ++e) {
    const int64_t p = s.edges[2 * e], c = s.edges[2 * e + 1];
    if (p >= 0 && p < n && c >= 0 && c < n) parent[c] = p;
  }
  std::vector<double> trips(static_cast<size_t>(n)), extent(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    trips[i] = std::exp2(feat(i, kAstLogTrips)) - 1.0;
    extent[i] = std::exp2(feat(i, kAstLogExtent)) - 1.0;
  }
  // The nearest parallel loop strictly above each node (parents come before their children).
  std::vector<int64_t> nearest_parallel(static_cast<size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t p = parent[i];
    if (p >= 0 && p < i) nearest_parallel[i] = kind(p) == kAstForParallel ? p : nearest_parallel[p];
  }
  auto is_loop = [&](int64_t i) { return kind(i) >= kAstForSerial && kind(i) <= kAstForUnrolled; };
  auto is_arith = [&](int64_t i) {
    const int k = kind(i);
    return k == kAstAdd || k == kAstMul || k == kAstMinMax || k == kAstSelect || k == kAstCall;
  };
  int o = 0;
  auto put = [&](double v) { out[o++] = static_cast<float>(v); };

  double deepest = 0;
  for (int64_t i = 0; i < n; ++i) deepest = std::max(deepest, feat(i, kAstDepth));
  put(log2p(static_cast<double>(n)));
  put(deepest);
  for (int k = 0; k < kAstNumKinds; ++k) {
    double count = 0, runs = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (kind(i) != k) continue;
      count += 1;
      runs += trips[i];
    }
    put(log2p(count));
    put(log2p(runs));
  }
  double moved = 0;
  for (const int k : {kAstLoad, kAstStore}) {
    double total = 0, inner[5] = {0, 0, 0, 0, 0}, outer[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < n; ++i) {
      if (kind(i) != k) continue;
      const double bytes = trips[i] * feat(i, kAstBytes);
      total += bytes;
      const double st = feat(i, kAstLogStride), so = feat(i, kAstLogOuterStride);
      inner[st < 0 ? 4 : st == 0 ? 0 : st < 1.5 ? 1 : st < 4.2 ? 2 : 3] += bytes;
      outer[so < 0 ? 3 : so == 0 ? 0 : so < 1.5 ? 1 : 2] += bytes;
    }
    put(log2p(total));
    for (const double b : inner) put(log2p(b));
    for (const double b : outer) put(log2p(b));
    moved += total;
  }
  double ops = 0, lane_ops = 0, vector_ops = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!is_arith(i)) continue;
    const double lanes = std::max(1.0, feat(i, kAstLanes));
    ops += trips[i];
    lane_ops += trips[i] * lanes;
    if (lanes > 1) vector_ops += trips[i];
  }
  put(log2p(ops));
  put(log2p(lane_ops));
  put(vector_ops / std::max(ops, 1.0));
  put(log2p(lane_ops) - log2p(moved));

  double parallel = 0, launches = 0, tasks = 0, widest = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (kind(i) != kAstForParallel) continue;
    parallel += 1;
    launches += trips[i];
    tasks += trips[i] * extent[i];
    widest = std::max(widest, extent[i]);
  }
  put(parallel);
  put(log2p(launches));
  put(log2p(tasks));
  put(log2p(widest));
  double work = 0, work_parallel = 0;
  WeightedMean task_count, task_work, task_launches;
  for (int64_t i = 0; i < n; ++i) {
    if (kind(i) != kAstStore) continue;
    const double w = trips[i] * std::max(1.0, feat(i, kAstBytes));
    work += w;
    const int64_t p = nearest_parallel[i];
    if (p < 0) continue;
    work_parallel += w;
    task_count.add(std::log2(1.0 + extent[p]), w);
    task_work.add(std::log2(1.0 + trips[i] / std::max(1.0, trips[p] * extent[p])), w);
    task_launches.add(std::log2(1.0 + trips[p]), w);
  }
  put(work_parallel / std::max(work, 1.0));
  put(task_count.get());
  put(task_work.get());
  put(task_launches.get());

  for (const int k : {kAstForSerial, kAstForVectorized, kAstForUnrolled}) {
    double iterations = 0, widest_loop = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (kind(i) != k) continue;
      iterations += trips[i] * extent[i];
      widest_loop = std::max(widest_loop, extent[i]);
    }
    put(log2p(iterations));
    put(log2p(widest_loop));
  }
  WeightedMean inner_extent, inner_footprint;
  double entries = 0, iterations = 0, footprint = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!is_loop(i)) continue;
    entries += trips[i];
    iterations += trips[i] * extent[i];
    footprint = std::max(footprint, feat(i, kAstLogFootprint));
    if (feat(i, kAstInnermost) != 1) continue;
    inner_extent.add(std::log2(1.0 + extent[i]), trips[i] * extent[i]);
    inner_footprint.add(feat(i, kAstLogFootprint), trips[i] * extent[i]);
  }
  put(inner_extent.get());
  put(inner_footprint.get());
  put(log2p(entries));
  put(log2p(iterations));
  put(footprint);
  double allocs = 0, alloc_runs = 0, alloc_bytes = 0, alloc_largest = 0, alloc_footprint = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (kind(i) != kAstAllocate) continue;
    allocs += 1;
    alloc_runs += trips[i];
    alloc_bytes += trips[i] * feat(i, kAstBytes);
    alloc_largest = std::max(alloc_largest, feat(i, kAstBytes));
    alloc_footprint = std::max(alloc_footprint, feat(i, kAstLogFootprint));
  }
  put(allocs);
  put(log2p(alloc_runs));
  put(log2p(alloc_bytes));
  put(log2p(alloc_largest));
  put(alloc_footprint);
  WeightedMean store_lanes;
  for (int64_t i = 0; i < n; ++i)
    if (kind(i) == kAstStore) store_lanes.add(feat(i, kAstLanes), trips[i]);
  put(store_lanes.get());
  if (o != kTreeWidth) throw std::logic_error("handcrafted_tree_features: width out of step");
}

}  // namespace

int handcrafted_tree_width() { return 2 * kTreeWidth; }

std::vector<float> handcrafted_tree_features(const AstSet& s) {
  if (s.node_feat_width != kAstFeatureWidth) {
    throw InputError(fmt::format(
        "{}: syntax trees with {} node features; XGBoost's tree features read {} (trees of an "
        "older lowering: tcost collect --rewrite lowers them again)",
        s.source.empty() ? s.name : s.source, s.node_feat_width, kAstFeatureWidth));
  }
  const int w = handcrafted_tree_width();
  std::vector<float> out(static_cast<size_t>(s.num_configs) * w, 0.0f);
  for (int64_t c = 0; c < s.num_configs; ++c) {
    tree_aggregates(s, s.node_offsets[c], s.node_offsets[c + 1], s.edge_offsets[c],
                    s.edge_offsets[c + 1], &out[static_cast<size_t>(c) * w]);
  }
  for (int64_t c = 0; c < s.num_configs; ++c) {
    float* row = &out[static_cast<size_t>(c) * w];
    for (int k = 0; k < kTreeWidth; ++k) row[kTreeWidth + k] = row[k] - out[k];
  }
  return out;
}

}  // namespace tcost::model
