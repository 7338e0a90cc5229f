#include "core/graph.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <unordered_map>

#include "core/error.h"

namespace tcost {

const char* collection_name(Collection c) {
  return c == Collection::kLayout ? "layout" : c == Collection::kTile ? "tile" : "ast";
}

int64_t Graph::config_stride() const {
  return collection == Collection::kLayout ? num_config_nodes() * config_feat_width
                                           : config_feat_width;
}

double Graph::target(int64_t i) const {
  if (collection == Collection::kTile) {
    return static_cast<double>(runtime_ns[i]) / static_cast<double>(normalizer_ns[i]);
  }
  return static_cast<double>(runtime_ns[i]);
}

std::vector<double> Graph::targets() const {
  std::vector<double> t(static_cast<size_t>(num_configs));
  for (int64_t i = 0; i < num_configs; ++i) t[i] = target(i);
  return t;
}

Graph select_configs(const Graph& g, const std::vector<int64_t>& indices) {
  Graph out = g;
  const int64_t stride = g.config_stride();
  out.num_configs = static_cast<int64_t>(indices.size());
  out.config_feat.assign(indices.size() * stride, 0.0f);
  out.runtime_ns.resize(indices.size());
  out.normalizer_ns.resize(g.normalizer_ns.empty() ? 0 : indices.size());
  for (size_t k = 0; k < indices.size(); ++k) {
    const int64_t i = indices[k];
    TCOST_CHECK(i >= 0 && i < g.num_configs, "config index {} out of range", i);
    std::copy_n(g.config(i), stride, out.config_feat.begin() + static_cast<int64_t>(k) * stride);
    out.runtime_ns[k] = g.runtime_ns[i];
    if (!g.normalizer_ns.empty()) out.normalizer_ns[k] = g.normalizer_ns[i];
  }
  return out;
}

Graph subsample_configs(const Graph& g, int64_t max_configs, uint64_t seed) {
  if (max_configs <= 0 || g.num_configs <= max_configs) return g;
  std::vector<int64_t> idx(static_cast<size_t>(g.num_configs));
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937_64 rng(seed);
  // Partial Fisher-Yates: the first max_configs positions become a uniform sample.
  for (int64_t k = 0; k < max_configs; ++k) {
    std::uniform_int_distribution<int64_t> pick(k, g.num_configs - 1);
    std::swap(idx[k], idx[pick(rng)]);
  }
  idx.resize(static_cast<size_t>(max_configs));
  std::sort(idx.begin(), idx.end());
  return select_configs(g, idx);
}

namespace {

// For each config, the index of the first config with identical features.
std::vector<int64_t> first_occurrence(const Graph& g) {
  const int64_t stride = g.config_stride();
  std::unordered_multimap<uint64_t, int64_t> seen;
  std::vector<int64_t> first(static_cast<size_t>(g.num_configs));
  for (int64_t i = 0; i < g.num_configs; ++i) {
    const float* c = g.config(i);
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the feature bytes
    const auto* bytes = reinterpret_cast<const uint8_t*>(c);
    for (int64_t b = 0; b < stride * static_cast<int64_t>(sizeof(float)); ++b) {
      h = (h ^ bytes[b]) * 1099511628211ull;
    }
    first[i] = i;
    auto range = seen.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      if (std::equal(c, c + stride, g.config(it->second))) {
        first[i] = it->second;
        break;
      }
    }
    if (first[i] == i) seen.emplace(h, i);
  }
  return first;
}

}  // namespace

int64_t count_duplicate_configs(const Graph& g) {
  const auto first = first_occurrence(g);
  int64_t n = 0;
  for (int64_t i = 0; i < g.num_configs; ++i) n += first[i] != i;
  return n;
}

int64_t merge_duplicate_configs(Graph& g) {
  const auto first = first_occurrence(g);
  std::vector<int64_t> keep;
  std::unordered_map<int64_t, int64_t> best;  // first occurrence -> config with minimum target
  for (int64_t i = 0; i < g.num_configs; ++i) {
    const int64_t f = first[i];
    if (f == i) {
      keep.push_back(i);
      best[i] = i;
    } else if (g.target(i) < g.target(best[f])) {
      best[f] = i;
    }
  }
  const int64_t merged = g.num_configs - static_cast<int64_t>(keep.size());
  if (merged == 0) return 0;
  for (auto& k : keep) k = best[k];
  g = select_configs(g, keep);
  return merged;
}

bool canonicalize_layout_padding(Graph& g) {
  if (g.collection != Collection::kLayout) return false;
  if (std::any_of(g.config_feat.begin(), g.config_feat.end(), [](float v) { return v < 0; })) {
    return false;
  }
  constexpr int kGroup = 6;
  if (g.config_feat_width % kGroup != 0) return false;
  for (size_t start = 0; start + kGroup <= g.config_feat.size(); start += kGroup) {
    float* grp = &g.config_feat[start];
    bool seen[kGroup] = {};
    int k = 0;
    int max_seen = -1;
    // Extend the prefix while it can still become a permutation of 0..k-1.
    int best = 1;
    for (; k < kGroup; ++k) {
      const int v = static_cast<int>(grp[k]);
      if (v < 0 || v >= kGroup || seen[v] || static_cast<float>(v) != grp[k]) break;
      seen[v] = true;
      max_seen = std::max(max_seen, v);
      if (max_seen == k) best = k + 1;
    }
    for (int j = best; j < kGroup; ++j) grp[j] = -1.0f;
  }
  return true;
}

}  // namespace tcost
