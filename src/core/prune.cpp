#include "core/prune.h"

#include <algorithm>

#include "core/error.h"

namespace tcost {

Graph induced_subgraph(const Graph& g, std::vector<int32_t> keep) {
  std::sort(keep.begin(), keep.end());
  std::vector<int32_t> new_id(static_cast<size_t>(g.num_nodes), -1);
  for (size_t i = 0; i < keep.size(); ++i) {
    TCOST_CHECK(keep[i] >= 0 && keep[i] < g.num_nodes, "node {} out of range", keep[i]);
    TCOST_CHECK(new_id[keep[i]] < 0, "node {} repeated", keep[i]);
    new_id[keep[i]] = static_cast<int32_t>(i);
  }
  Graph out;
  out.name = g.name;
  out.source = g.source;
  out.collection = g.collection;
  out.num_nodes = static_cast<int64_t>(keep.size());
  out.node_feat_width = g.node_feat_width;
  out.node_feat.resize(keep.size() * static_cast<size_t>(g.node_feat_width));
  out.node_opcode.resize(keep.size());
  for (size_t i = 0; i < keep.size(); ++i) {
    std::copy_n(&g.node_feat[static_cast<size_t>(keep[i]) * g.node_feat_width], g.node_feat_width,
                &out.node_feat[i * g.node_feat_width]);
    out.node_opcode[i] = g.node_opcode[keep[i]];
  }
  for (int64_t e = 0; e < g.num_edges(); ++e) {
    const int32_t u = new_id[g.edges[2 * e]], v = new_id[g.edges[2 * e + 1]];
    if (u >= 0 && v >= 0) {
      out.edges.push_back(u);
      out.edges.push_back(v);
    }
  }
  out.num_configs = g.num_configs;
  out.config_feat_width = g.config_feat_width;
  out.runtime_ns = g.runtime_ns;
  out.normalizer_ns = g.normalizer_ns;
  if (g.collection == Collection::kTile) {
    out.config_feat = g.config_feat;
    return out;
  }
  std::vector<int64_t> columns;  // positions in g.config_node_ids that survive
  for (int64_t j = 0; j < g.num_config_nodes(); ++j) {
    const int32_t id = new_id[g.config_node_ids[j]];
    if (id >= 0) {
      columns.push_back(j);
      out.config_node_ids.push_back(id);
    }
  }
  const int64_t w = g.config_feat_width, nc = g.num_config_nodes();
  out.config_feat.resize(static_cast<size_t>(g.num_configs) * columns.size() * w);
  float* dst = out.config_feat.data();
  for (int64_t c = 0; c < g.num_configs; ++c) {
    for (int64_t j : columns) {
      dst = std::copy_n(&g.config_feat[static_cast<size_t>((c * nc + j) * w)], w, dst);
    }
  }
  return out;
}

std::vector<int32_t> config_neighbourhood(const Graph& g, int hops) {
  std::vector<int32_t> all;
  if (g.collection == Collection::kTile) {
    all.resize(static_cast<size_t>(g.num_nodes));
    for (int32_t i = 0; i < g.num_nodes; ++i) all[i] = i;
    return all;
  }
  std::vector<char> in(static_cast<size_t>(g.num_nodes), 0);
  for (int32_t id : g.config_node_ids) in[id] = 1;
  for (int h = 0; h < hops; ++h) {
    std::vector<char> next = in;
    for (int64_t e = 0; e < g.num_edges(); ++e) {
      const int32_t u = g.edges[2 * e], v = g.edges[2 * e + 1];
      if (in[u]) next[v] = 1;
      if (in[v]) next[u] = 1;
    }
    in.swap(next);
  }
  for (int32_t i = 0; i < g.num_nodes; ++i) {
    if (in[i]) all.push_back(i);
  }
  return all;
}

}  // namespace tcost
