#include "core/synth_ast.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "core/error.h"

namespace tcost {
namespace {

// A perfect loop nest: out[...] += in1[...] * in2[...] over `extent` dims.
struct Program {
  std::string family;
  std::vector<int64_t> extent;
  // For each of the three accesses (out, in1, in2): which dims index it, and its contiguous dim.
  std::vector<int> uses[3];
  int contiguous[3];
};

Program make_program(std::mt19937_64& rng, int index) {
  auto p2 = [&](int lo, int hi) {
    return int64_t{1} << std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  Program p;
  if (index % 2 == 0) {  // matmul: dims m, n, k
    p.family = "matmul";
    p.extent = {p2(5, 8), p2(5, 8), p2(5, 8)};
    p.uses[0] = {0, 1};
    p.contiguous[0] = 1;
    p.uses[1] = {0, 2};
    p.contiguous[1] = 2;
    p.uses[2] = {2, 1};
    p.contiguous[2] = 1;
  } else {  // direct convolution: co, y, x, ci, ky, kx
    p.family = "conv";
    p.extent = {p2(4, 6), p2(3, 5), p2(3, 5), p2(3, 6), 3, 3};
    p.uses[0] = {0, 1, 2};
    p.contiguous[0] = 2;
    p.uses[1] = {3, 1, 2, 4, 5};
    p.contiguous[1] = 2;
    p.uses[2] = {0, 3, 4, 5};
    p.contiguous[2] = 3;
  }
  return p;
}

struct Schedule {
  std::vector<int64_t> tile;     // inner extent per dim
  std::vector<int> outer_order;  // dims, outermost first
  std::vector<int> inner_order;  // dims, outermost first; the last is innermost
  int vector_width = 1;          // innermost loop vectorised when > 1
  bool parallel = false;         // outermost loop parallel
  bool unroll = false;           // second-innermost loop unrolled (when its extent <= 8)
};

Schedule random_schedule(std::mt19937_64& rng, const Program& p) {
  Schedule s;
  const size_t d = p.extent.size();
  for (size_t i = 0; i < d; ++i) {
    const int max_log = static_cast<int>(std::log2(static_cast<double>(p.extent[i])));
    s.tile.push_back(int64_t{1} << std::uniform_int_distribution<int>(0, max_log)(rng));
  }
  s.outer_order.resize(d);
  std::iota(s.outer_order.begin(), s.outer_order.end(), 0);
  std::shuffle(s.outer_order.begin(), s.outer_order.end(), rng);
  s.inner_order = s.outer_order;
  std::shuffle(s.inner_order.begin(), s.inner_order.end(), rng);
  const int widths[] = {1, 4, 8, 16};
  s.vector_width = widths[std::uniform_int_distribution<int>(0, 3)(rng)];
  const int innermost = s.inner_order.back();
  while (s.vector_width > 1 && s.tile[innermost] % s.vector_width != 0) s.vector_width /= 2;
  s.parallel = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  s.unroll = std::uniform_int_distribution<int>(0, 1)(rng) == 1;
  return s;
}

// The cost model; see docs/synth.md ("Syntax-tree collection").
double runtime_ns(const Program& p, const Schedule& s) {
  double macs = 1;
  for (int64_t e : p.extent) macs *= static_cast<double>(e);
  const int inner = s.inner_order.back();
  double per_mac = 1.0;
  for (int a = 0; a < 3; ++a) {
    const bool varies = std::find(p.uses[a].begin(), p.uses[a].end(), inner) != p.uses[a].end();
    if (varies && p.contiguous[a] != inner) per_mac += 1.5;  // strided access in the hot loop
  }
  const bool unit = per_mac == 1.0;
  per_mac /=
      unit ? static_cast<double>(s.vector_width) : std::sqrt(static_cast<double>(s.vector_width));
  double footprint = 0;  // bytes the inner tile loops touch
  for (int a = 0; a < 3; ++a) {
    double f = 4;
    for (int dim : p.uses[a]) f *= static_cast<double>(s.tile[dim]);
    footprint += f;
  }
  constexpr double kL1 = 32 * 1024, kL2 = 1024 * 1024;
  double memory = 1.0;
  if (footprint > kL1) memory += 0.4 * std::log2(footprint / kL1);
  if (footprint > kL2) memory += 1.0 * std::log2(footprint / kL2);
  const double inner_trips = macs / static_cast<double>(s.tile[inner]);
  const int second = s.inner_order.size() > 1 ? s.inner_order[s.inner_order.size() - 2] : inner;
  const double unroll = s.unroll && s.tile[second] <= 8 ? static_cast<double>(s.tile[second]) : 1.0;
  double outer_trips = 1;
  for (size_t i = 0; i < p.extent.size(); ++i) {
    outer_trips *= std::ceil(static_cast<double>(p.extent[i]) / static_cast<double>(s.tile[i]));
  }
  double t = 0.5 * macs * per_mac * memory + 2.0 * inner_trips / unroll + 20.0 * outer_trips;
  const int64_t outer_extent =
      static_cast<int64_t>(std::ceil(static_cast<double>(p.extent[s.outer_order[0]]) /
                                     static_cast<double>(s.tile[s.outer_order[0]])));
  if (s.parallel && outer_extent >= 2) t = t / 2.0 * (outer_extent % 2 == 1 ? 1.3 : 1.05) + 5000.0;
  return t + 1000.0;
}

// Builds the loop-nest tree of a configured program into `set`.
void append_tree(AstSet& set, const Program& p, const Schedule& s) {
  struct Node {
    int32_t kind;
    std::vector<float> f;
  };
  std::vector<Node> nodes;
  std::vector<int32_t> edges;
  auto add = [&](int32_t kind, int parent, int depth) {
    Node n{kind, std::vector<float>(kAstFeatureWidth, 0.0f)};
    n.f[kAstDepth] = static_cast<float>(depth);
    nodes.push_back(n);
    const int id = static_cast<int>(nodes.size()) - 1;
    if (parent >= 0) {
      edges.push_back(parent);
      edges.push_back(id);
      nodes[parent].f[kAstChildren] += 1;
    }
    return id;
  };
  const int root = add(kAstRoot, -1, 0);
  int parent = add(kAstBlock, root, 1);
  double trips = 1;
  std::vector<std::pair<int, int64_t>> loops;  // (dim, extent), outermost first
  for (int d : s.outer_order) {
    loops.emplace_back(d, static_cast<int64_t>(std::ceil(static_cast<double>(p.extent[d]) /
                                                         static_cast<double>(s.tile[d]))));
  }
  for (int d : s.inner_order) loops.emplace_back(d, s.tile[d]);
  std::vector<int> loop_ids, loop_dims;
  for (size_t i = 0; i < loops.size(); ++i) {
    const auto [dim, extent] = loops[i];
    if (extent == 1) continue;  // a unit loop disappears when lowered
    int32_t kind = kAstForSerial;
    if (i == 0 && s.parallel) kind = kAstForParallel;
    if (i + 1 == loops.size() && s.vector_width > 1) kind = kAstForVectorized;
    if (i + 2 == loops.size() && s.unroll && extent <= 8) kind = kAstForUnrolled;
    const int id = add(kind, parent, static_cast<int>(nodes[parent].f[kAstDepth]) + 1);
    nodes[id].f[kAstLogExtent] = static_cast<float>(std::log2(1.0 + static_cast<double>(extent)));
    nodes[id].f[kAstLogTrips] = static_cast<float>(std::log2(1.0 + trips));
    trips *= static_cast<double>(extent);
    loop_ids.push_back(id);
    loop_dims.push_back(dim);
    parent = id;
  }
  if (!loop_ids.empty()) nodes[loop_ids.back()].f[kAstInnermost] = 1.0f;
  const int inner = s.inner_order.back();
  const float bytes = 4.0f * static_cast<float>(s.vector_width);
  // log2(1 + |elements|) access `a` moves per step of the `k`-th innermost loop: 0 when the
  // loop's dim does not index it, 1 along its contiguous dim, a row's length otherwise.
  auto log_stride = [&](int a, size_t k) {
    if (loop_dims.size() < k) return 0.0f;
    const int dim = loop_dims[loop_dims.size() - k];
    if (std::find(p.uses[a].begin(), p.uses[a].end(), dim) == p.uses[a].end()) return 0.0f;
    const double elements =
        dim == p.contiguous[a] ? 1.0 : static_cast<double>(p.extent[p.contiguous[a]]);
    return static_cast<float>(std::log2(1.0 + elements));
  };
  auto value = [&](int id) {
    nodes[id].f[kAstLanes] = static_cast<float>(s.vector_width);
    nodes[id].f[kAstTypeBits] = 32.0f;
    return id;
  };
  auto access = [&](int kind, int par, int a) {
    const int id = value(add(kind, par, static_cast<int>(nodes[par].f[kAstDepth]) + 1));
    nodes[id].f[kAstBytes] = bytes;
    nodes[id].f[kAstLogStride] = log_stride(a, 1);
    nodes[id].f[kAstLogOuterStride] = log_stride(a, 2);
    nodes[id].f[kAstLogTrips] = static_cast<float>(std::log2(1.0 + trips));
    const bool varies = std::find(p.uses[a].begin(), p.uses[a].end(), inner) != p.uses[a].end();
    nodes[id].f[kAstUnitStride] = !varies || p.contiguous[a] == inner ? 1.0f : 0.0f;
    return id;
  };
  const int store = access(kAstStore, parent, 0);
  const int sum = value(add(kAstAdd, store, static_cast<int>(nodes[store].f[kAstDepth]) + 1));
  access(kAstLoad, sum, 0);
  const int mul = value(add(kAstMul, sum, static_cast<int>(nodes[sum].f[kAstDepth]) + 1));
  access(kAstLoad, mul, 1);
  access(kAstLoad, mul, 2);
  // Footprints of loops: bytes the accesses touch within one iteration of the loop.
  for (size_t k = 0; k < loop_ids.size(); ++k) {
    double f = 0;
    for (int a = 0; a < 3; ++a) {
      double fa = 4;
      for (int dim : p.uses[a]) fa *= static_cast<double>(s.tile[dim]);
      f += fa;
    }
    nodes[loop_ids[k]].f[kAstLogFootprint] =
        static_cast<float>(std::log2(1.0 + f / std::pow(2.0, static_cast<double>(k))));
  }
  for (const Node& n : nodes) {
    set.kinds.push_back(n.kind);
    set.feats.insert(set.feats.end(), n.f.begin(), n.f.end());
  }
  set.edges.insert(set.edges.end(), edges.begin(), edges.end());
  set.node_offsets.push_back(set.num_nodes());
  set.edge_offsets.push_back(set.num_edges());
}

}  // namespace

AstSet make_synth_ast(const SynthOptions& o, int index) {
  if (o.configs < 1) throw UsageError("--configs must be at least 1");
  std::seed_seq seq{static_cast<uint64_t>(o.seed), static_cast<uint64_t>(index), uint64_t{7}};
  std::mt19937_64 rng(seq);
  const Program p = make_program(rng, index);
  AstSet set;
  set.name = fmt::format("synth_ast_{}_{:04d}", p.family, index);
  set.num_configs = o.configs;
  set.node_offsets.push_back(0);
  set.edge_offsets.push_back(0);
  const int d = static_cast<int>(p.extent.size());
  set.config_feat_width = 2 * d + 3;  // tile sizes, loop positions, vector width, parallel, unroll
  std::normal_distribution<double> noise(0.0, o.noise_sigma);
  for (int c = 0; c < o.configs; ++c) {
    const Schedule s = random_schedule(rng, p);
    append_tree(set, p, s);
    set.runtime_ns.push_back(
        std::max<int64_t>(1, std::llround(runtime_ns(p, s) * std::exp(noise(rng)))));
    for (int i = 0; i < d; ++i) set.config_feat.push_back(static_cast<float>(s.tile[i]));
    for (int i = 0; i < d; ++i) {
      set.config_feat.push_back(static_cast<float>(
          std::find(s.inner_order.begin(), s.inner_order.end(), i) - s.inner_order.begin()));
    }
    set.config_feat.push_back(static_cast<float>(s.vector_width));
    set.config_feat.push_back(s.parallel ? 1.0f : 0.0f);
    set.config_feat.push_back(s.unroll ? 1.0f : 0.0f);
  }
  return set;
}

SynthSummary write_synth_ast_dataset(const std::string& out_dir, const SynthOptions& o) {
  SynthSummary summary;
  for (const auto& [index, split] : synth_splits(o)) {
    const AstSet s = make_synth_ast(o, index);
    save_ast(synth_path(out_dir, split, s.name), s, true);
    count_split(summary, split);
  }
  return summary;
}

}  // namespace tcost
