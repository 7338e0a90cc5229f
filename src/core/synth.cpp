#include "core/synth.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>

#include "core/dataset.h"
#include "core/error.h"
#include "core/opcodes.h"
#include "core/tpugraphs_io.h"

namespace fs = std::filesystem;

namespace tcost {
namespace {

using Layout = std::vector<int>;  // minor-to-major dimension order

struct OpKind {
  int opcode;
  int arity;           // operands taken
  double weight;       // how often the generator picks it
  double ns_per_work;  // cost of one unit of work (see work_of)
  bool configurable;   // whether layout configs apply to it
};

// The op mix of the generator; ns_per_work are invented but fixed constants.
constexpr OpKind kOps[] = {
    {op::kConvolution, 2, 2.0, 0.020, true},  {op::kDot, 2, 2.5, 0.020, true},
    {op::kAdd, 2, 2.0, 0.050, false},         {op::kMultiply, 2, 1.5, 0.050, false},
    {op::kMaximum, 2, 1.0, 0.050, false},     {op::kDivide, 2, 0.5, 0.150, false},
    {op::kExponential, 1, 0.7, 0.400, false}, {op::kTanh, 1, 0.5, 0.500, false},
    {op::kReduce, 1, 1.2, 0.060, true},       {op::kTranspose, 1, 1.0, 0.080, true},
    {op::kReshape, 1, 1.0, 0.030, true},      {op::kCopy, 1, 0.5, 0.040, true},
    {op::kReduceWindow, 1, 0.6, 0.070, true}, {op::kBroadcast, 1, 0.6, 0.030, false},
};
constexpr int kNumKinds = static_cast<int>(sizeof(kOps) / sizeof(kOps[0]));

// The generators (docs/synth.md): an op mix (multipliers of kOps' weights by class) and the
// constants of the layout and tile cost models.
struct Generator {
  const char* name;
  double matmul, elementwise, transcendental, movement;  // op-mix multipliers
  double minor_exponent, second_exponent;                // access factor: lanes and sublanes wasted
  double conversion_ns;                                  // per element of a layout conversion
  double matmul_layout_penalty;                          // dot/conv whose feature dim is not minor
  int locality;  // operand 0 among the last `locality` nodes
  double tile_minor_exponent, tile_second_exponent;
  // Defaults of the options it suits (used unless given): noise sigma, nodes per graph.
  double noise;
  int min_nodes, max_nodes;
};

constexpr Generator kGenerators[] = {
    {"standard", 1, 1, 1, 1, 0.5, 0.25, 0.08, 1.25, 6, 0.6, 0.3, 0.02, 30, 120},
    // Fused elementwise chains: cheap ops, expensive conversions between them, so that layout
    // agreement along edges (neighbour interactions) decides the runtime. Bigger graphs.
    {"fusion", 0.3, 3, 2, 1, 0.5, 0.25, 0.32, 1.25, 12, 0.4, 0.2, 0.05, 60, 200},
    // Matmul-heavy: per-node layout effects dominate, conversions are cheap. Small graphs.
    {"compute", 3, 0.5, 0.5, 0.7, 0.8, 0.4, 0.04, 1.6, 4, 0.9, 0.45, 0.02, 20, 60},
    // Data movement (transposes, reshapes, copies, reductions) under heavy noise.
    {"movement", 0.5, 1, 0.5, 3, 0.3, 0.15, 0.16, 1.1, 6, 0.5, 0.25, 0.10, 30, 120},
};

const Generator& generator_of(const std::string& name) {
  for (const auto& g : kGenerators) {
    if (name == g.name) return g;
  }
  std::string known;
  for (const auto& g : kGenerators) known += std::string(known.empty() ? "" : ", ") + g.name;
  throw UsageError(fmt::format("--generator: expected one of {}, found '{}'", known, name));
}

double mix_weight(const Generator& gen, int opcode) {
  switch (opcode) {
    case op::kConvolution:
    case op::kDot:
      return gen.matmul;
    case op::kAdd:
    case op::kMultiply:
    case op::kMaximum:
    case op::kDivide:
      return gen.elementwise;
    case op::kExponential:
    case op::kTanh:
      return gen.transcendental;
    default:
      return gen.movement;
  }
}

struct Node {
  int kind = -1;  // index into kOps; -1 for parameters
  std::vector<int64_t> dims;
  std::vector<int> operands;
  std::vector<int> perm;    // transpose: output dim k is operand dim perm[k]
  int reduce_dim = -1;      // reduce: the operand dim reduced
  int64_t contraction = 1;  // dot/conv: elements summed per output element
  bool configurable = false;
};

int64_t elems(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (int64_t x : d) p *= x;
  return p;
}

Layout default_layout(size_t rank) {
  Layout l(rank);
  for (size_t i = 0; i < rank; ++i) l[i] = static_cast<int>(rank - 1 - i);
  return l;
}

void clip_size(std::vector<int64_t>& d, int64_t max_elems) {
  while (elems(d) > max_elems) {
    auto it = std::max_element(d.begin(), d.end());
    *it = std::max<int64_t>(1, *it / 2);
  }
}

int64_t pow2(std::mt19937_64& rng, int lo, int hi) {
  return int64_t{1} << std::uniform_int_distribution<int>(lo, hi)(rng);
}

std::vector<Node> make_nodes(std::mt19937_64& rng, int n, const Generator& gen) {
  std::vector<Node> nodes;
  const int params = std::uniform_int_distribution<int>(2, 4)(rng);
  constexpr int64_t kMaxElems = int64_t{1} << 19;
  for (int i = 0; i < params; ++i) {
    Node p;
    const int rank = std::uniform_int_distribution<int>(2, 4)(rng);
    for (int k = 0; k < rank; ++k) p.dims.push_back(pow2(rng, 2, 8));
    clip_size(p.dims, kMaxElems);
    nodes.push_back(p);
  }
  std::vector<double> weights;
  for (const auto& k : kOps) weights.push_back(k.weight * mix_weight(gen, k.opcode));
  std::discrete_distribution<int> pick_kind(weights.begin(), weights.end());
  std::uniform_real_distribution<double> u01(0, 1);
  for (int i = params; i < n; ++i) {
    Node v;
    v.kind = pick_kind(rng);
    const OpKind& kind = kOps[v.kind];
    // Operand 0 is recent (locality, as in real graphs); operand 1 is any earlier node.
    const int lo = std::max(0, i - gen.locality);
    v.operands.push_back(std::uniform_int_distribution<int>(lo, i - 1)(rng));
    if (kind.arity == 2) v.operands.push_back(std::uniform_int_distribution<int>(0, i - 1)(rng));
    const auto& in = nodes[v.operands[0]].dims;
    const int r = static_cast<int>(in.size());
    v.dims = in;
    switch (kind.opcode) {
      case op::kDot:
        v.contraction = in.back();
        v.dims.back() = pow2(rng, 4, 8);
        break;
      case op::kConvolution:
        v.contraction = 9 * in.back();
        v.dims.back() = pow2(rng, 3, 7);
        break;
      case op::kTranspose:
        v.perm.resize(r);
        std::iota(v.perm.begin(), v.perm.end(), 0);
        std::shuffle(v.perm.begin(), v.perm.end(), rng);
        for (int k = 0; k < r; ++k) v.dims[k] = in[v.perm[k]];
        break;
      case op::kReduce:
        v.reduce_dim = std::uniform_int_distribution<int>(0, r - 1)(rng);
        if (r > 1) {
          v.dims.erase(v.dims.begin() + v.reduce_dim);
        } else {
          v.dims = {1};
        }
        break;
      case op::kReshape:
        if (r > 1 && u01(rng) < 0.5) {  // merge the two minor dims
          v.dims[r - 2] *= v.dims[r - 1];
          v.dims.pop_back();
        } else if (r < 4 && v.dims.back() >= 4) {  // split the minor dim
          v.dims.back() /= 2;
          v.dims.push_back(2);
        }
        break;
      case op::kReduceWindow:
        for (int k = std::max(0, r - 3); k < r - 1; ++k)
          v.dims[k] = std::max<int64_t>(1, v.dims[k] / 2);
        break;
      case op::kBroadcast:
        if (r < 4) v.dims.push_back(pow2(rng, 3, 6));
        break;
      default:
        break;
    }
    clip_size(v.dims, kMaxElems);
    v.configurable = kind.configurable || u01(rng) < 0.15;
    nodes.push_back(v);
  }
  return nodes;
}

// Work units of a node: elements produced, times the contraction for dot/conv, elements read
// for reductions.
double work_of(const std::vector<Node>& nodes, const Node& v) {
  if (v.kind < 0) return 0;
  const OpKind& k = kOps[v.kind];
  if (k.opcode == op::kReduce) return static_cast<double>(elems(nodes[v.operands[0]].dims));
  if (k.opcode == op::kReduceWindow) return 9.0 * static_cast<double>(elems(v.dims));
  return static_cast<double>(elems(v.dims)) * static_cast<double>(v.contraction) /
         (v.contraction > 1 ? 16.0 : 1.0);
}

// Cost factor of accessing a tensor of `dims` in `layout`: small minor dims waste vector lanes
// (128 wide), small second-minor dims waste sublanes (8).
double access_factor(const std::vector<int64_t>& dims, const Layout& layout, const Generator& gen) {
  if (layout.empty()) return 1.0;
  const double minor = static_cast<double>(std::min<int64_t>(dims[layout[0]], 128));
  double f = std::pow(128.0 / minor, gen.minor_exponent);
  if (layout.size() > 1) {
    const double second = static_cast<double>(std::min<int64_t>(dims[layout[1]], 8));
    f *= std::pow(8.0 / second, gen.second_exponent);
  }
  return f;
}

Layout random_layout(std::mt19937_64& rng, size_t rank) {
  Layout l(rank);
  std::iota(l.begin(), l.end(), 0);
  std::shuffle(l.begin(), l.end(), rng);
  return l;
}

// One node's configuration: output, input (operand 0) and kernel (operand 1) layouts.
struct NodeConfig {
  Layout out, in, kernel;
};

void put_layout(float* dst, const Layout& l) {
  for (int k = 0; k < 6; ++k)
    dst[k] = k < static_cast<int>(l.size()) ? static_cast<float>(l[k]) : -1.0f;
}

void fill_node_features(const std::vector<Node>& nodes, Graph& g) {
  g.num_nodes = static_cast<int64_t>(nodes.size());
  g.node_feat_width = node_feat::kWidth;
  g.node_feat.assign(nodes.size() * node_feat::kWidth, 0.0f);
  g.node_opcode.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& v = nodes[i];
    float* f = &g.node_feat[i * node_feat::kWidth];
    g.node_opcode[i] = v.kind < 0 ? op::kParameter : kOps[v.kind].opcode;
    f[node_feat::kIsRoot] = i + 1 == nodes.size() ? 1.0f : 0.0f;
    f[node_feat::kElementTypeF32] = 1.0f;
    double sum = 0;
    for (size_t k = 0; k < v.dims.size() && k < 6; ++k) {
      f[node_feat::kShapeDimsBegin + k] = static_cast<float>(v.dims[k]);
      sum += static_cast<double>(v.dims[k]);
    }
    f[node_feat::kShapeSum] = static_cast<float>(sum);
    f[node_feat::kShapeProduct] = static_cast<float>(elems(v.dims));
    if (v.reduce_dim >= 0) f[node_feat::kOpDimsBegin] = static_cast<float>(v.reduce_dim);
    if (v.kind >= 0 && kOps[v.kind].opcode == op::kReduceWindow) {
      for (int k = 0; k < 2; ++k) {
        f[node_feat::kWindowSizeBegin + k] = 3.0f;
        f[node_feat::kWindowStrideBegin + k] = 2.0f;
      }
    }
    put_layout(f + node_feat::kLayoutMinorToMajorBegin, default_layout(v.dims.size()));
    for (int o : v.operands) {
      g.edges.push_back(static_cast<int32_t>(i));
      g.edges.push_back(o);
    }
  }
}

// The layout runtime model; see docs/synth.md.
double layout_runtime_ns(const std::vector<Node>& nodes, const std::vector<int>& config_slot,
                         const std::vector<NodeConfig>& cfg, const Generator& gen) {
  auto out_layout = [&](int v) -> Layout {
    return config_slot[v] >= 0 ? cfg[config_slot[v]].out : default_layout(nodes[v].dims.size());
  };
  double total = 1000.0;  // launch overhead
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& v = nodes[i];
    if (v.kind < 0) continue;
    const OpKind& kind = kOps[v.kind];
    const int slot = config_slot[i];
    const Layout out = out_layout(static_cast<int>(i));
    double factor = access_factor(v.dims, out, gen);
    if (slot >= 0) {
      const NodeConfig& c = cfg[slot];
      const auto& in_dims = nodes[v.operands[0]].dims;
      factor = 0.6 * factor + 0.4 * access_factor(in_dims, c.in, gen);
      // Matmul-like ops want the feature (last) dim minor in their output.
      if ((kind.opcode == op::kDot || kind.opcode == op::kConvolution) &&
          out[0] != static_cast<int>(v.dims.size()) - 1) {
        factor *= gen.matmul_layout_penalty;
      }
      // Reductions along the minor dim of their input are contiguous.
      if (kind.opcode == op::kReduce && c.in[0] == v.reduce_dim) factor *= 0.7;
    }
    // A transpose whose output layout matches its operand's physical order moves no data.
    if (kind.opcode == op::kTranspose) {
      const Layout producer = out_layout(v.operands[0]);
      Layout physical(out.size());
      for (size_t k = 0; k < out.size(); ++k) physical[k] = v.perm[out[k]];
      if (physical == producer) factor *= 0.1;
    }
    total += kind.ns_per_work * work_of(nodes, v) * factor;
    // Conversions: an operand whose layout differs from what this node expects is copied.
    for (size_t s = 0; s < v.operands.size(); ++s) {
      const int p = v.operands[s];
      const Layout produced = out_layout(p);
      Layout expected = default_layout(nodes[p].dims.size());
      if (slot >= 0) expected = s == 0 ? cfg[slot].in : cfg[slot].kernel;
      if (expected.size() == produced.size() && expected != produced) {
        const double minor_change = expected[0] != produced[0] ? 2.0 : 1.0;
        total += gen.conversion_ns * minor_change * static_cast<double>(elems(nodes[p].dims));
      }
    }
  }
  return total;
}

Graph make_layout_graph(const SynthOptions& o, std::mt19937_64& rng) {
  const Generator& gen = generator_of(o.generator);
  const int n =
      std::uniform_int_distribution<int>(std::max(o.min_nodes, 6), std::max(o.max_nodes, 6))(rng);
  std::vector<Node> nodes = make_nodes(rng, n, gen);
  Graph g;
  g.collection = Collection::kLayout;
  fill_node_features(nodes, g);
  std::vector<int> slot(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].configurable) {
      slot[i] = static_cast<int>(g.config_node_ids.size());
      g.config_node_ids.push_back(static_cast<int32_t>(i));
    }
  }
  if (g.config_node_ids.empty()) {  // every layout graph has a configurable node
    const int last = static_cast<int>(nodes.size()) - 1;
    nodes[last].configurable = true;
    slot[last] = 0;
    g.config_node_ids.push_back(last);
  }
  const int64_t nc = g.num_config_nodes();
  g.num_configs = o.configs;
  g.config_feat_width = kLayoutConfigWidth;
  g.config_feat.assign(static_cast<size_t>(o.configs * nc * kLayoutConfigWidth), -1.0f);
  g.runtime_ns.resize(static_cast<size_t>(o.configs));
  std::uniform_real_distribution<double> u01(0, 1);
  std::normal_distribution<double> noise(0.0, o.noise_sigma);
  for (int c = 0; c < o.configs; ++c) {
    // Each configuration departs from the default layouts at its own rate, so that the data
    // spans near-default (often fast) and scrambled (often slow) regions.
    const double q = c == 0 ? 0.0 : u01(rng);
    auto choose = [&](size_t rank) {
      return u01(rng) < q ? random_layout(rng, rank) : default_layout(rank);
    };
    std::vector<NodeConfig> cfg(static_cast<size_t>(nc));
    for (int64_t j = 0; j < nc; ++j) {
      const Node& v = nodes[g.config_node_ids[j]];
      cfg[j].out = choose(v.dims.size());
      cfg[j].in = choose(nodes[v.operands.empty() ? 0 : v.operands[0]].dims.size());
      if (v.operands.size() > 1) cfg[j].kernel = choose(nodes[v.operands[1]].dims.size());
      float* f = &g.config_feat[static_cast<size_t>((c * nc + j) * kLayoutConfigWidth)];
      put_layout(f, cfg[j].out);
      put_layout(f + 6, cfg[j].in);
      put_layout(f + 12, cfg[j].kernel);
    }
    const double t = layout_runtime_ns(nodes, slot, cfg, gen) * std::exp(noise(rng));
    g.runtime_ns[c] = std::max<int64_t>(1, std::llround(t));
  }
  return g;
}

// Tile configuration of a kernel whose output has dims D: tile sizes T (powers of two <= D).
void put_tile(float* dst, const std::vector<int64_t>& t) {
  double sum = 0, prod = 1;
  for (size_t k = 0; k < 6; ++k) {
    const double v = k < t.size() ? static_cast<double>(t[k]) : 0.0;
    dst[k] = static_cast<float>(v);
    sum += v;
    if (k < t.size()) prod *= v;
  }
  dst[6] = static_cast<float>(sum);
  dst[7] = static_cast<float>(prod);
}

// The tile runtime model; see docs/synth.md.
double tile_runtime_ns(double work_ns, const std::vector<int64_t>& d, const std::vector<int64_t>& t,
                       int64_t in_minor, const Generator& gen) {
  double tiles = 1, padded = 1, exact = 1, tile_out = 1;
  for (size_t k = 0; k < d.size(); ++k) {
    const double n = std::ceil(static_cast<double>(d[k]) / static_cast<double>(t[k]));
    tiles *= n;
    padded *= n * static_cast<double>(t[k]);
    exact *= static_cast<double>(d[k]);
    tile_out *= static_cast<double>(t[k]);
  }
  const double minor = static_cast<double>(std::min<int64_t>(t.back(), 128));
  double eff = std::pow(128.0 / minor, gen.tile_minor_exponent);
  if (t.size() > 1) {
    eff *= std::pow(8.0 / static_cast<double>(std::min<int64_t>(t[t.size() - 2], 8)),
                    gen.tile_second_exponent);
  }
  const double tile_in = tile_out / static_cast<double>(t.back()) * static_cast<double>(in_minor);
  const double footprint = 4.0 * (tile_out + tile_in);
  constexpr double kFastMemory = 4.0 * (1 << 20);
  const double spill = footprint > kFastMemory ? std::pow(footprint / kFastMemory, 1.5) : 1.0;
  return 500.0 + work_ns * (padded / exact) * eff * spill + 400.0 * tiles;
}

Graph make_tile_graph(const SynthOptions& o, std::mt19937_64& rng) {
  const Generator& gen = generator_of(o.generator);
  const int n = std::uniform_int_distribution<int>(std::max(o.min_nodes / 4, 4),
                                                   std::max(o.max_nodes / 4, 5))(rng);
  std::vector<Node> nodes = make_nodes(rng, n, gen);
  Graph g;
  g.collection = Collection::kTile;
  fill_node_features(nodes, g);
  double work_ns = 0;
  for (const Node& v : nodes) {
    if (v.kind >= 0) work_ns += kOps[v.kind].ns_per_work * work_of(nodes, v);
  }
  const Node& root = nodes.back();
  const std::vector<int64_t>& d = root.dims;
  const int64_t in_minor = root.operands.empty() ? d.back() : nodes[root.operands[0]].dims.back();
  g.num_configs = o.configs;
  g.config_feat_width = kTileConfigWidth;
  g.config_feat.assign(static_cast<size_t>(o.configs * kTileConfigWidth), 0.0f);
  g.runtime_ns.resize(static_cast<size_t>(o.configs));
  std::normal_distribution<double> noise(0.0, o.noise_sigma);
  auto tile_of = [&](int c) {
    std::vector<int64_t> t(d.size());
    for (size_t k = 0; k < d.size(); ++k) {
      const int max_log = static_cast<int>(std::floor(std::log2(static_cast<double>(d[k]))));
      // Config 0 is the default: tiles of up to 8 in every dim.
      t[k] = c == 0
                 ? std::min<int64_t>(d[k], 8)
                 : int64_t{1} << std::uniform_int_distribution<int>(0, std::max(0, max_log))(rng);
    }
    return t;
  };
  for (int c = 0; c < o.configs; ++c) {
    const std::vector<int64_t> t = tile_of(c);
    float* f = &g.config_feat[static_cast<size_t>(c * kTileConfigWidth)];
    put_tile(f, t);      // kernel tile
    put_tile(f + 8, t);  // output tile
    std::vector<int64_t> in_t = t;
    in_t.back() = in_minor;
    put_tile(f + 16, in_t);  // input tile: the full contraction dim
    g.runtime_ns[c] = std::max<int64_t>(
        1, std::llround(tile_runtime_ns(work_ns, d, t, in_minor, gen) * std::exp(noise(rng))));
  }
  // The normaliser is the default configuration's runtime, measured once more.
  const int64_t normalizer = std::max<int64_t>(
      1,
      std::llround(tile_runtime_ns(work_ns, d, tile_of(0), in_minor, gen) * std::exp(noise(rng))));
  g.normalizer_ns.assign(static_cast<size_t>(o.configs), normalizer);
  return g;
}

}  // namespace

std::vector<std::string> synth_generator_names() {
  std::vector<std::string> out;
  for (const auto& g : kGenerators) out.push_back(g.name);
  return out;
}

void apply_generator_defaults(SynthOptions& o, bool noise_given, bool nodes_given) {
  const Generator& gen = generator_of(o.generator);
  if (!noise_given) o.noise_sigma = gen.noise;
  if (!nodes_given) {
    o.min_nodes = gen.min_nodes;
    o.max_nodes = gen.max_nodes;
  }
}

Graph make_synth_graph(const SynthOptions& options, int index) {
  if (options.configs < 1) throw UsageError("--configs must be at least 1");
  std::seed_seq seq{static_cast<uint64_t>(options.seed), static_cast<uint64_t>(index),
                    static_cast<uint64_t>(options.collection)};
  std::mt19937_64 rng(seq);
  Graph g = options.collection == Collection::kLayout ? make_layout_graph(options, rng)
                                                      : make_tile_graph(options, rng);
  g.name = fmt::format("synth_{}_{:04d}", collection_name(options.collection), index);
  return g;
}

std::vector<std::pair<int, Split>> synth_splits(const SynthOptions& options) {
  if (options.graphs < 1) throw UsageError("--graphs must be at least 1");
  std::vector<int> order(static_cast<size_t>(options.graphs));
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(options.seed * 7919 + 17);
  std::shuffle(order.begin(), order.end(), rng);
  const int n = options.graphs;
  int n_test = static_cast<int>(std::lround(n * options.test_fraction));
  int n_valid = static_cast<int>(std::lround(n * options.valid_fraction));
  if (n >= 3) {
    n_test = std::max(n_test, 1);
    n_valid = std::max(n_valid, 1);
  }
  n_test = std::min(n_test, n);
  n_valid = std::min(n_valid, n - n_test);
  std::vector<std::pair<int, Split>> out;
  for (int k = 0; k < n; ++k) {
    out.emplace_back(order[k], k < n_test ? Split::kTest
                                          : (k < n_test + n_valid ? Split::kValid : Split::kTrain));
  }
  return out;
}

std::string synth_path(const std::string& out_dir, Split split, const std::string& name) {
  const fs::path dir = fs::path(out_dir) / split_name(split);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  return (dir / (name + ".npz")).string();
}

void count_split(SynthSummary& s, Split split) {
  (split == Split::kTest ? s.test : split == Split::kValid ? s.valid : s.train)++;
}

SynthSummary write_synth_dataset(const std::string& out_dir, const SynthOptions& options) {
  if (options.min_nodes > options.max_nodes) throw UsageError("min_nodes > max_nodes");
  SynthSummary summary;
  for (const auto& [index, split] : synth_splits(options)) {
    const Graph g = make_synth_graph(options, index);
    save_graph(synth_path(out_dir, split, g.name), g, true);
    count_split(summary, split);
  }
  return summary;
}

}  // namespace tcost
