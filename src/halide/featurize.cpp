#include "halide/featurize.h"

#include <map>

namespace tcost::halide {
namespace {

// Fills a node's TpuGraphs features.
void put_node(Graph& g, int v, const NodeInfo& n, bool root) {
  float* f = &g.node_feat[static_cast<size_t>(v) * node_feat::kWidth];
  const int slot = element_type_slot(n.type);
  if (slot >= 0) f[slot] = 1;
  f[node_feat::kIsRoot] = root ? 1.0f : 0.0f;
  double sum = 0, product = 1;
  for (size_t k = 0; k < 6; ++k) {
    const bool has = k < n.dims.size();
    f[node_feat::kShapeDimsBegin + k] = has ? static_cast<float>(n.dims[k]) : 0.0f;
    f[node_feat::kLayoutMinorToMajorBegin + k] = has ? static_cast<float>(k) : -1.0f;
    if (has) {
      sum += static_cast<double>(n.dims[k]);
      product *= static_cast<double>(n.dims[k]);
    }
  }
  f[node_feat::kShapeSum] = static_cast<float>(sum);
  f[node_feat::kShapeProduct] = static_cast<float>(product);
  f[node_feat::kOpDimsBegin] = static_cast<float>(n.reduction);
  f[node_feat::kOpDimsBegin + 1] = static_cast<float>(n.values);
  if (n.window > 0) {
    for (int k = 0; k < 2; ++k) {
      f[node_feat::kWindowSizeBegin + k] = static_cast<float>(n.window);
      f[node_feat::kWindowStrideBegin + k] = static_cast<float>(n.stride);
    }
  }
  for (int k = 0; k < kNumOpKinds; ++k) f[kOpCountsBegin + k] = static_cast<float>(n.ops[k]);
}

}  // namespace

int element_type_slot(const std::string& type) {
  // XLA's PrimitiveType numbers, at node_feat::kElementTypeBegin + id.
  static const std::map<std::string, int> kIds = {
      {"bool", 1},   {"int8", 2},     {"int16", 3},    {"int32", 4},
      {"int64", 5},  {"uint8", 6},    {"uint16", 7},   {"uint32", 8},
      {"uint64", 9}, {"float16", 10}, {"float32", 11}, {"float64", 12}};
  const auto it = kIds.find(type);
  return it == kIds.end() ? -1 : node_feat::kElementTypeBegin + it->second;
}

Graph program_graph(const ProgramInfo& p, Collection collection) {
  Graph g;
  g.name = p.instance;
  g.collection = collection;
  g.num_nodes = static_cast<int64_t>(p.nodes.size());
  g.node_feat_width = node_feat::kWidth;
  g.node_feat.assign(p.nodes.size() * node_feat::kWidth, 0.0f);
  for (size_t v = 0; v < p.nodes.size(); ++v) {
    g.node_opcode.push_back(p.nodes[v].opcode);
    put_node(g, static_cast<int>(v), p.nodes[v], p.nodes[v].is_output);
    for (int q : p.nodes[v].producers) {
      g.edges.push_back(static_cast<int32_t>(v));
      g.edges.push_back(q);
    }
  }
  if (collection == Collection::kLayout) {
    g.config_feat_width = kStageConfigWidth;
    for (int v : p.stages()) g.config_node_ids.push_back(v);
  } else {
    g.config_feat_width = kTileConfigWidth;
  }
  return g;
}

Graph layout_graph(const ProgramInfo& p, const std::vector<Schedule>& schedules,
                   const std::vector<int64_t>& runtime_ns) {
  Graph g = program_graph(p, Collection::kLayout);
  const auto c = static_cast<int64_t>(schedules.size());
  g.num_configs = c;
  const auto nc = static_cast<size_t>(g.num_config_nodes());
  g.config_feat.assign(static_cast<size_t>(c) * nc * kStageConfigWidth, 0.0f);
  for (int64_t i = 0; i < c; ++i) {
    for (size_t j = 0; j < nc; ++j) {
      encode_stage(p.nodes[g.config_node_ids[j]], static_cast<int>(j), schedules[i][j],
                   &g.config_feat[(static_cast<size_t>(i) * nc + j) * kStageConfigWidth]);
    }
  }
  g.runtime_ns = runtime_ns;
  g.runtime_ns.resize(static_cast<size_t>(c), 0);
  return g;
}

Graph tile_graph(const ProgramInfo& p, const std::vector<Schedule>& schedules,
                 const std::vector<int64_t>& runtime_ns, int64_t normalizer_ns) {
  Graph g = program_graph(p, Collection::kTile);
  const auto c = static_cast<int64_t>(schedules.size());
  g.num_configs = c;
  g.config_feat.assign(static_cast<size_t>(c) * kTileConfigWidth, 0.0f);
  for (int64_t i = 0; i < c; ++i)
    encode_tile(p, schedules[i], &g.config_feat[static_cast<size_t>(i) * kTileConfigWidth]);
  g.runtime_ns = runtime_ns;
  g.runtime_ns.resize(static_cast<size_t>(c), 0);
  g.normalizer_ns.assign(static_cast<size_t>(c), normalizer_ns);
  return g;
}

}  // namespace tcost::halide
