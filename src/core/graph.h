// One computational graph with its measured configurations, as a TpuGraphs file holds it.
//   Collection      - layout (a configuration per configurable node) or tile (one per graph).
//   Graph           - nodes, features, edges, configurations and their runtimes.
//   node_feat::     - the meaning of the 140 node-feature positions that tcost fills or reads.
//   select/subsample/merge - derived graphs over a subset of configurations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcost {

// kAst marks syntax-tree data (ast.h); Graph itself is always layout or tile.
enum class Collection { kLayout, kTile, kAst };
const char* collection_name(Collection c);  // "layout" / "tile" / "ast"

// TpuGraphs node-feature positions (width 140).
namespace node_feat {
constexpr int kWidth = 140;
constexpr int kIsRoot = 0;                     // 1 when the node is the graph's output
constexpr int kElementTypeBegin = 2;           // 2..20: one-hot element type
constexpr int kElementTypeF32 = 13;            // one-hot slot of float32
constexpr int kShapeDimsBegin = 21;            // 21..26: output shape dims 0..5
constexpr int kShapeSum = 27;                  // sum of output dims
constexpr int kShapeProduct = 28;              // element count of the output
constexpr int kOpDimsBegin = 31;               // 31..36: operation dimensions (e.g. reduce dims)
constexpr int kWindowSizeBegin = 37;           // 37..42: window size per dim
constexpr int kWindowStrideBegin = 43;         // 43..48: window stride per dim
constexpr int kLayoutMinorToMajorBegin = 134;  // 134..139: the node's own output layout
}  // namespace node_feat

constexpr int kLayoutConfigWidth = 18;  // output, input, kernel layouts: 6 minor-to-major dims each
constexpr int kTileConfigWidth = 24;    // kernel, output, input tile bounds: 6 dims, sum, product

struct Graph {
  std::string name;    // file stem: the ID of the competition's submission format
  std::string source;  // path the graph was read from, for messages
  Collection collection = Collection::kLayout;

  int64_t num_nodes = 0;
  int node_feat_width = 0;
  std::vector<float> node_feat;      // num_nodes x node_feat_width, nodes in topological order
  std::vector<int32_t> node_opcode;  // num_nodes, HLO opcode ids (see opcodes.h)
  std::vector<int32_t> edges;        // num_edges x 2: row (u, v) means u consumes v's output
  std::vector<int64_t> node_splits;  // optional: first node of each HLO computation

  int64_t num_configs = 0;
  int config_feat_width = 0;             // 18 (layout) or 24 (tile) in TpuGraphs
  std::vector<int32_t> config_node_ids;  // layout: the configurable nodes (nc)
  std::vector<float> config_feat;        // layout: c x nc x width; tile: c x width
  std::vector<int64_t> runtime_ns;       // c measured runtimes
  std::vector<int64_t> normalizer_ns;    // tile: c default-config runtimes; layout: empty

  int64_t num_edges() const { return static_cast<int64_t>(edges.size() / 2); }
  int64_t num_config_nodes() const { return static_cast<int64_t>(config_node_ids.size()); }
  // Floats of config_feat per configuration.
  int64_t config_stride() const;
  const float* config(int64_t i) const { return config_feat.data() + i * config_stride(); }
  // What rankings are judged on: runtime / normalizer for tile, runtime for layout.
  double target(int64_t i) const;
  std::vector<double> targets() const;
};

// A graph holding only the configurations `indices`, in that order.
Graph select_configs(const Graph& g, const std::vector<int64_t>& indices);
// At most max_configs configurations drawn uniformly without replacement (seeded), in their
// original order. Returns the graph unchanged when it has no more than max_configs.
Graph subsample_configs(const Graph& g, int64_t max_configs, uint64_t seed);
// Number of configurations whose features equal an earlier configuration's.
int64_t count_duplicate_configs(const Graph& g);
// Merges configurations with identical features, keeping the minimum target; returns how many
// were merged away. The survivors keep their first-occurrence order.
int64_t merge_duplicate_configs(Graph& g);
// Layout configs: rewrites 0-padded layout groups to -1 padding (the longest prefix that is a
// permutation of 0..k-1 is the layout, the rest is padding). Files padded with -1 are unchanged.
// Returns true when the graph was 0-padded.
bool canonicalize_layout_padding(Graph& g);

}  // namespace tcost
