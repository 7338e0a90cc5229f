#include "model/features.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/prune.h"
#include "core/tpugraphs_io.h"
#include "model/handcrafted.h"

namespace tcost::model {
namespace {

torch::Tensor signed_log1p(const torch::Tensor& x) {
  return torch::sign(x) * torch::log1p(torch::abs(x));
}

torch::Tensor from_floats(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

torch::Tensor from_ints(const std::vector<int32_t>& v) {
  return torch::from_blob(const_cast<int32_t*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kInt32)
      .to(torch::kInt64);
}

// InputError unless g has the collection and feature widths of the normaliser's data.
void check_fits(const Graph& g, const Normalizer& n, const char* whose) {
  if (g.collection != n.collection || g.node_feat_width != n.node_feat_width ||
      g.config_feat_width != n.config_feat_width) {
    throw InputError(
        fmt::format("{}: a {} graph with feature widths {}/{}, but {} {} graphs with "
                    "widths {}/{}",
                    g.source, collection_name(g.collection), g.node_feat_width, g.config_feat_width,
                    whose, collection_name(n.collection), n.node_feat_width, n.config_feat_width));
  }
}

// Per-column mean and standard deviation over rows, accumulated in float64.
struct ColumnStats {
  torch::Tensor sum, sq;
  double count = 0;
  void add(const torch::Tensor& rows) {
    const auto x = rows.to(torch::kFloat64);
    if (!sum.defined()) {
      sum = torch::zeros({x.size(1)}, torch::kFloat64);
      sq = torch::zeros_like(sum);
    }
    sum += x.sum(0);
    sq += (x * x).sum(0);
    count += static_cast<double>(x.size(0));
  }
  void finish(torch::Tensor& mean, torch::Tensor& std) const {
    const auto m = sum / std::max(1.0, count);
    const auto sd = (sq / std::max(1.0, count) - m * m).clamp_min(0).sqrt();
    mean = m.to(torch::kFloat32);
    // Constant columns pass through unscaled.
    std = torch::where(sd < 1e-6, torch::ones_like(sd), sd).to(torch::kFloat32);
  }
};

struct ScalarStats {
  double sum = 0, sq = 0, count = 0;
  void add(double v) {
    sum += v;
    sq += v * v;
    count += 1;
  }
  void finish(double& mean, double& std) const {
    mean = sum / std::max(1.0, count);
    std = std::max(1e-6, std::sqrt(std::max(0.0, sq / std::max(1.0, count) - mean * mean)));
  }
};

// Edge tensors and degree normalisations, shared by graphs and syntax trees.
void set_edges(GraphInput& in, const std::vector<int32_t>& edges, int64_t n) {
  const int64_t m = static_cast<int64_t>(edges.size() / 2);
  std::vector<int64_t> src(static_cast<size_t>(2 * m)), dst(static_cast<size_t>(2 * m));
  std::vector<float> deg(static_cast<size_t>(n), 0.0f);
  for (int64_t e = 0; e < m; ++e) {
    const int64_t u = edges[2 * e], v = edges[2 * e + 1];
    src[2 * e] = v;
    dst[2 * e] = u;
    src[2 * e + 1] = u;
    dst[2 * e + 1] = v;
    deg[u] += 1;
    deg[v] += 1;
  }
  in.src = torch::tensor(src, torch::kInt64);
  in.dst = torch::tensor(dst, torch::kInt64);
  const auto d = torch::tensor(deg, torch::kFloat32);
  in.inv_deg = (1.0 / d.clamp_min(1)).unsqueeze(1);
  const auto d1 = d + 1;  // with self loop
  in.self_norm = (1.0 / d1).unsqueeze(1);
  in.gcn_norm =
      m > 0 ? torch::rsqrt(d1.index_select(0, in.src) * d1.index_select(0, in.dst)).unsqueeze(1)
            : torch::zeros({0, 1});
}

// The nodes of a forest by depth (GraphInput::tree_levels): roots are the nodes no edge
// enters, and each level is the children of the one before, grouped by parent. InputError when a
// node has two parents or lies on a cycle (a node no root reaches).
void set_tree_levels(GraphInput& in, const std::vector<int32_t>& edges, int64_t n) {
  std::vector<int64_t> parent(static_cast<size_t>(n), -1);
  std::vector<std::vector<int64_t>> children(static_cast<size_t>(n));
  for (size_t e = 0; e + 1 < edges.size(); e += 2) {
    const int64_t u = edges[e], v = edges[e + 1];
    if (parent[v] >= 0)
      throw InputError(
          fmt::format("syntax tree: node {} has two parents ({}, {})", v, parent[v], u));
    parent[v] = u;
    children[u].push_back(v);
  }
  std::vector<int64_t> level, position(static_cast<size_t>(n), -1), order;
  for (int64_t v = 0; v < n; ++v)
    if (parent[v] < 0) level.push_back(v);
  in.tree_levels.clear();
  in.tree_parent.clear();
  in.tree_children.clear();
  std::vector<int64_t> parent_pos;
  while (!level.empty()) {
    std::vector<float> child_count(level.size());
    for (size_t i = 0; i < level.size(); ++i) {
      position[level[i]] = static_cast<int64_t>(i);
      child_count[i] = static_cast<float>(std::max<size_t>(1, children[level[i]].size()));
    }
    order.insert(order.end(), level.begin(), level.end());
    in.tree_levels.push_back(torch::tensor(level, torch::kInt64));
    in.tree_parent.push_back(torch::tensor(parent_pos, torch::kInt64));
    in.tree_children.push_back(torch::tensor(child_count, torch::kFloat32).unsqueeze(1));
    std::vector<int64_t> next;
    parent_pos.clear();
    for (int64_t u : level) {
      for (int64_t v : children[u]) {
        next.push_back(v);
        parent_pos.push_back(position[u]);
      }
    }
    level = std::move(next);
  }
  if (static_cast<int64_t>(order.size()) != n)
    throw InputError(fmt::format("syntax tree: {} of {} nodes lie on a cycle",
                                 n - static_cast<int64_t>(order.size()), n));
  in.tree_order = torch::tensor(order, torch::kInt64);
  in.tree_unlevel = torch::argsort(in.tree_order);
}

}  // namespace

Normalizer Normalizer::fit(const std::vector<std::string>& files, int64_t max_configs) {
  return fit_each(
      files.size(), [&](size_t i) { return load_graph(files[i]); }, max_configs);
}

Normalizer Normalizer::fit(const std::vector<Graph>& graphs, int64_t max_configs) {
  return fit_each(
      graphs.size(), [&](size_t i) { return graphs[i]; }, max_configs);
}

Normalizer Normalizer::fit_each(size_t count_graphs, const std::function<Graph(size_t)>& get,
                                int64_t max_configs) {
  if (count_graphs == 0)
    throw InputError("cannot fit feature statistics: the training split is empty");
  Normalizer n;
  ColumnStats nodes, tiles;
  ScalarStats log_target;
  for (size_t i = 0; i < count_graphs; ++i) {
    Graph g = get(i);
    if (i == 0) {
      n.collection = g.collection;
      n.node_feat_width = g.node_feat_width;
      n.config_feat_width = g.config_feat_width;
    }
    check_fits(g, n, "the rest of the dataset has");
    g = subsample_configs(g, max_configs, 17);
    nodes.add(signed_log1p(from_floats(g.node_feat, {g.num_nodes, g.node_feat_width})));
    if (g.collection == Collection::kTile) {
      tiles.add(torch::log1p(
          from_floats(g.config_feat, {g.num_configs, g.config_feat_width}).clamp_min(0)));
    }
    for (int64_t c = 0; c < g.num_configs; ++c) log_target.add(std::log(g.target(c)));
  }
  nodes.finish(n.node_mean, n.node_std);
  if (n.collection == Collection::kTile) {
    tiles.finish(n.tile_mean, n.tile_std);
  } else {
    n.tile_mean = torch::zeros({n.config_feat_width});
    n.tile_std = torch::ones({n.config_feat_width});
  }
  log_target.finish(n.log_target_mean, n.log_target_std);
  return n;
}

void Normalizer::save(torch::serialize::OutputArchive& a) const {
  a.write("collection", torch::tensor(static_cast<int64_t>(collection)));
  a.write("node_feat_width", torch::tensor(node_feat_width));
  a.write("config_feat_width", torch::tensor(config_feat_width));
  a.write("node_mean", node_mean);
  a.write("node_std", node_std);
  a.write("tile_mean", tile_mean);
  a.write("tile_std", tile_std);
  a.write("log_target", torch::tensor({log_target_mean, log_target_std}, torch::kFloat64));
  if (hand_mean.defined()) {
    a.write("hand_mean", hand_mean);
    a.write("hand_std", hand_std);
  }
  if (trees) {
    torch::serialize::OutputArchive t;
    trees->save(t);
    a.write("trees", t);
  }
}

Normalizer Normalizer::load(torch::serialize::InputArchive& a) {
  Normalizer n;
  torch::Tensor t;
  a.read("collection", t);
  const int64_t c = t.item<int64_t>();
  if (c < 0 || c > 2) throw InputError("checkpoint normaliser names an unknown collection");
  n.collection = static_cast<Collection>(c);
  a.read("node_feat_width", t);
  n.node_feat_width = t.item<int64_t>();
  a.read("config_feat_width", t);
  n.config_feat_width = t.item<int64_t>();
  a.read("node_mean", n.node_mean);
  a.read("node_std", n.node_std);
  a.read("tile_mean", n.tile_mean);
  a.read("tile_std", n.tile_std);
  a.read("log_target", t);
  n.log_target_mean = t[0].item<double>();
  n.log_target_std = t[1].item<double>();
  if (n.node_mean.numel() != n.node_feat_width || n.tile_mean.numel() != n.config_feat_width) {
    throw InputError("checkpoint normaliser has inconsistent sizes");
  }
  torch::Tensor hand_mean, hand_std;
  if (a.try_read("hand_mean", hand_mean)) {
    if (!a.try_read("hand_std", hand_std) || hand_mean.numel() != handcrafted_tree_width() ||
        hand_std.numel() != handcrafted_tree_width())
      throw InputError(fmt::format(
          "checkpoint normaliser's hand-crafted tree features: {} statistics, expected {}",
          hand_mean.numel(), handcrafted_tree_width()));
    n.hand_mean = hand_mean;
    n.hand_std = hand_std;
  }
  torch::serialize::InputArchive tree_archive;
  if (a.try_read("trees", tree_archive)) {
    auto trees = std::make_shared<Normalizer>(load(tree_archive));
    if (trees->collection != Collection::kAst)
      throw InputError("checkpoint normaliser's syntax-tree part is not a syntax-tree one");
    n.trees = std::move(trees);
  }
  return n;
}

PreparedGraph prepare_graph(const Graph& full, const Normalizer& norm, int prune_hops) {
  check_fits(full, norm, "the model was trained on");
  Graph g = prune_hops >= 0 && full.collection == Collection::kLayout
                ? induced_subgraph(full, config_neighbourhood(full, prune_hops))
                : full;
  canonicalize_layout_padding(g);  // 0-padded files read like -1-padded ones
  PreparedGraph p;
  p.name = g.name;
  p.collection = g.collection;
  GraphInput& in = p.input;
  const int64_t n = g.num_nodes;
  in.num_nodes = n;
  in.node_feat = (signed_log1p(from_floats(g.node_feat, {n, g.node_feat_width})) - norm.node_mean) /
                 norm.node_std;
  in.opcode = from_ints(g.node_opcode);
  // Messages in both directions: a node hears its operands and its users.
  const int64_t m = g.num_edges();
  set_edges(in, g.edges, n);
  // Shapes, for layout-aware features: the dims a layout makes minor.
  std::vector<float> dims(static_cast<size_t>((n + 1) * 6), 0.0f);
  if (g.node_feat_width > node_feat::kShapeDimsBegin + 6) {
    for (int64_t i = 0; i < n; ++i) {
      for (int k = 0; k < 6; ++k) {
        dims[i * 6 + k] = std::log1p(
            std::max(0.0f, g.node_feat[i * g.node_feat_width + node_feat::kShapeDimsBegin + k]));
      }
    }
  }
  in.dims = torch::tensor(dims).view({n + 1, 6});
  std::vector<int64_t> operands(static_cast<size_t>(g.num_config_nodes() * 2), n);
  {
    std::vector<int64_t> pos(static_cast<size_t>(n), -1);
    for (int64_t j = 0; j < g.num_config_nodes(); ++j) pos[g.config_node_ids[j]] = j;
    std::vector<int> seen(static_cast<size_t>(g.num_config_nodes()), 0);
    for (int64_t e = 0; e < m; ++e) {
      const int64_t j = pos[g.edges[2 * e]];
      if (j >= 0 && seen[j] < 2) operands[j * 2 + seen[j]++] = g.edges[2 * e + 1];
    }
  }
  in.operands = torch::tensor(operands, torch::kInt64).view({g.num_config_nodes(), 2});
  {
    std::vector<int64_t> pos(static_cast<size_t>(n + 1), -1);
    for (int64_t j = 0; j < g.num_config_nodes(); ++j) pos[g.config_node_ids[j]] = j;
    std::vector<int64_t> oc(operands.size());
    for (size_t i = 0; i < operands.size(); ++i) oc[i] = pos[operands[i]];
    in.operand_config = torch::tensor(oc, torch::kInt64).view({g.num_config_nodes(), 2});
    std::vector<float> layout(static_cast<size_t>((n + 1) * 6), -1.0f);
    if (g.node_feat_width >= node_feat::kLayoutMinorToMajorBegin + 6) {
      for (int64_t i = 0; i < n; ++i) {
        for (int k = 0; k < 6; ++k) {
          layout[i * 6 + k] =
              g.node_feat[i * g.node_feat_width + node_feat::kLayoutMinorToMajorBegin + k];
        }
      }
    }
    in.node_layout = torch::tensor(layout).view({n + 1, 6});
  }
  if (g.collection == Collection::kLayout) {
    in.config_pos = from_ints(g.config_node_ids);
    p.configs =
        from_floats(g.config_feat, {g.num_configs, g.num_config_nodes(), g.config_feat_width});
  } else {
    in.config_pos = torch::zeros({0}, torch::kInt64);
    p.configs = from_floats(g.config_feat, {g.num_configs, g.config_feat_width});
  }
  const auto t = g.targets();
  p.targets = torch::tensor(t, torch::kFloat64);
  return p;
}

PreparedGraph select_configs(const PreparedGraph& g, const torch::Tensor& index) {
  PreparedGraph out;
  out.name = g.name;
  out.collection = g.collection;
  out.input = g.input;
  out.configs = g.configs.index_select(0, index);
  out.targets = g.targets.index_select(0, index);
  return out;
}

PreparedGraph select_views(const PreparedGraph& g, const AstSet& trees,
                           const std::vector<int64_t>& index, const Normalizer& norm) {
  if (!norm.trees) throw InputError("this model does not read syntax trees beside its graphs");
  if (trees.num_configs != g.num_configs()) {
    throw InputError(fmt::format("{}: {} syntax trees for {} configurations of the graph",
                                 trees.source.empty() ? trees.name : trees.source,
                                 trees.num_configs, g.num_configs()));
  }
  PreparedGraph out = select_configs(g, torch::tensor(index, torch::kInt64));
  out.input.trees =
      std::make_shared<const GraphInput>(prepare_ast_batch(trees, index, *norm.trees).input);
  return out;
}

}  // namespace tcost::model

namespace tcost::model {

Normalizer fit_ast_normalizer(const std::vector<std::string>& files, bool hand_features,
                              int64_t max_configs) {
  if (files.empty()) throw InputError("cannot fit feature statistics: the training split is empty");
  Normalizer n;
  n.collection = Collection::kAst;
  ColumnStats nodes, hand;
  ScalarStats log_target;
  for (size_t i = 0; i < files.size(); ++i) {
    const AstSet s = load_ast(files[i]);
    if (i == 0) {
      n.node_feat_width = s.node_feat_width;
    } else if (s.node_feat_width != n.node_feat_width) {
      throw InputError(fmt::format("{}: node feature width {}, the dataset's is {}", files[i],
                                   s.node_feat_width, n.node_feat_width));
    }
    nodes.add(signed_log1p(from_floats(s.feats, {s.num_nodes(), s.node_feat_width})));
    for (int64_t r : s.runtime_ns) log_target.add(std::log(static_cast<double>(r)));
    if (hand_features) {
      const AstSet first = first_ast_configs(s, max_configs);
      hand.add(from_floats(handcrafted_tree_features(first),
                           {first.num_configs, handcrafted_tree_width()}));
    }
  }
  nodes.finish(n.node_mean, n.node_std);
  if (hand_features) hand.finish(n.hand_mean, n.hand_std);
  n.config_feat_width = 0;
  n.tile_mean = torch::zeros({0});
  n.tile_std = torch::ones({0});
  log_target.finish(n.log_target_mean, n.log_target_std);
  return n;
}

namespace {

// The hand-crafted features of configurations `indices` of `set`, standardised (K, W). They read
// each tree beside configuration 0's (the default schedule), which is drawn with them; values
// beyond kHandClamp standard deviations (a family unlike the training ones) are clamped.
torch::Tensor standardised_hand_features(const AstSet& set, const std::vector<int64_t>& indices,
                                         const Normalizer& norm) {
  constexpr double kHandClamp = 6;
  std::vector<int64_t> with_default{0};
  with_default.insert(with_default.end(), indices.begin(), indices.end());
  const auto rows = handcrafted_tree_features(select_ast_configs(set, with_default));
  const int64_t k = static_cast<int64_t>(indices.size());
  const auto x = from_floats(rows, {k + 1, handcrafted_tree_width()}).narrow(0, 1, k);
  return ((x - norm.hand_mean) / norm.hand_std).clamp(-kHandClamp, kHandClamp);
}

}  // namespace

PreparedGraph prepare_ast_batch(const AstSet& set, const std::vector<int64_t>& indices,
                                const Normalizer& norm) {
  if (norm.collection != Collection::kAst || set.node_feat_width != norm.node_feat_width) {
    throw InputError(fmt::format("{}: syntax trees with {} node features do not fit this model",
                                 set.source, set.node_feat_width));
  }
  const AstSet s = select_ast_configs(set, indices);
  PreparedGraph p;
  p.name = s.name;
  p.collection = Collection::kAst;
  GraphInput& in = p.input;
  const int64_t n = s.num_nodes();
  in.num_nodes = n;
  in.node_feat =
      (signed_log1p(from_floats(s.feats, {n, s.node_feat_width})) - norm.node_mean) / norm.node_std;
  in.opcode = from_ints(s.kinds);
  std::vector<int32_t> edges(s.edges.size());
  std::vector<int64_t> tree(static_cast<size_t>(n));
  for (int64_t c = 0; c < s.num_configs; ++c) {
    for (int64_t i = s.node_offsets[c]; i < s.node_offsets[c + 1]; ++i) tree[i] = c;
    for (int64_t k = 2 * s.edge_offsets[c]; k < 2 * s.edge_offsets[c + 1]; ++k) {
      edges[k] = static_cast<int32_t>(s.edges[k] + s.node_offsets[c]);  // local -> batch ids
    }
  }
  set_edges(in, edges, n);
  set_tree_levels(in, edges, n);
  in.tree_id = torch::tensor(tree, torch::kInt64);
  in.config_pos = torch::zeros({0}, torch::kInt64);
  p.configs = torch::zeros({s.num_configs, 0});
  std::vector<double> t(s.runtime_ns.begin(), s.runtime_ns.end());
  p.targets = torch::tensor(t, torch::kFloat64);
  if (norm.hand_mean.defined()) in.hand = standardised_hand_features(set, indices, norm);
  return p;
}

}  // namespace tcost::model
