#include "core/ast.h"

#include <cmath>
#include <filesystem>
#include <numeric>

#include "core/error.h"

namespace tcost {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& key, const std::string& expected,
                       const std::string& found) {
  throw InputError(fmt::format("{}: key '{}': expected {}, found {}", path, key, expected, found));
}

NpyArray get_rank(const NpzFile& npz, const std::string& key, int rank) {
  NpyArray a = npz.get(key);
  if (a.rank() != rank)
    fail(npz.path(), key, fmt::format("rank {}", rank), "shape " + a.shape_str());
  return a;
}

std::vector<int64_t> offsets(const NpzFile& npz, const std::string& key, int64_t c, int64_t total) {
  const NpyArray a = get_rank(npz, key, 1);
  if (a.shape[0] != c + 1) fail(npz.path(), key, fmt::format("shape ({},)", c + 1), a.shape_str());
  auto v = as_int64(a, fmt::format("{}: key '{}'", npz.path(), key));
  if (v.front() != 0 || v.back() != total) {
    fail(npz.path(), key, fmt::format("offsets from 0 to {}", total),
         fmt::format("{} .. {}", v.front(), v.back()));
  }
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] < v[i - 1])
      fail(npz.path(), key, "non-decreasing offsets", fmt::format("{} after {}", v[i], v[i - 1]));
  }
  return v;
}

}  // namespace

bool is_ast_file(const std::string& path) { return NpzFile(path).has("ast_node_kind"); }

AstSet load_ast(const std::string& path, const LoadOptions& options) {
  return read_ast(NpzFile(path, options.npz));
}

AstSet read_ast(const NpzFile& npz) {
  const std::string& path = npz.path();
  AstSet s;
  s.source = path;
  s.name = std::filesystem::path(path).stem().string();
  const std::string where = path;
  const NpyArray kinds = get_rank(npz, "ast_node_kind", 1);
  const auto k64 = as_int64(kinds, path + ": key 'ast_node_kind'");
  for (size_t i = 0; i < k64.size(); ++i) {
    if (k64[i] < 0 || k64[i] >= kAstNumKinds) {
      fail(path, "ast_node_kind", fmt::format("kinds in [0, {})", static_cast<int>(kAstNumKinds)),
           fmt::format("{} at node {}", k64[i], i));
    }
  }
  s.kinds.assign(k64.begin(), k64.end());
  const int64_t n = s.num_nodes();
  const NpyArray feats = get_rank(npz, "ast_node_feat", 2);
  if (feats.shape[0] != n || feats.shape[1] < 1 || feats.shape[1] > 4096) {
    fail(path, "ast_node_feat", fmt::format("shape ({}, F)", n), feats.shape_str());
  }
  s.node_feat_width = static_cast<int>(feats.shape[1]);
  s.feats = as_float32(feats);
  for (size_t i = 0; i < s.feats.size(); ++i) {
    if (!std::isfinite(s.feats[i]))
      fail(path, "ast_node_feat", "finite values", fmt::format("{} at index {}", s.feats[i], i));
  }
  const NpyArray rt = get_rank(npz, "config_runtime", 1);
  s.num_configs = rt.shape[0];
  if (s.num_configs < 1) fail(path, "config_runtime", "at least one configuration", rt.shape_str());
  const auto r64 = as_int64(rt, path + ": key 'config_runtime'");
  for (size_t i = 0; i < r64.size(); ++i) {
    if (r64[i] <= 0)
      fail(path, "config_runtime", "positive runtimes (ns)",
           fmt::format("{} at index {}", r64[i], i));
  }
  s.runtime_ns = r64;
  s.node_offsets = offsets(npz, "ast_node_offsets", s.num_configs, n);
  const NpyArray e = npz.get("ast_edge_index");
  if (!(e.rank() == 2 && e.shape[1] == 2) && !(e.rank() == 1 && e.shape[0] == 0)) {
    fail(path, "ast_edge_index", "shape (E, 2)", e.shape_str());
  }
  const auto e64 = as_int64(e, path + ": key 'ast_edge_index'");
  s.edge_offsets =
      offsets(npz, "ast_edge_offsets", s.num_configs, static_cast<int64_t>(e64.size() / 2));
  s.edges.resize(e64.size());
  for (int64_t c = 0; c < s.num_configs; ++c) {
    const int64_t local = s.node_offsets[c + 1] - s.node_offsets[c];
    if (local < 1)
      fail(path, "ast_node_offsets", "at least one node per configuration",
           fmt::format("none for {}", c));
    for (int64_t k = 2 * s.edge_offsets[c]; k < 2 * s.edge_offsets[c + 1]; ++k) {
      if (e64[k] < 0 || e64[k] >= local) {
        fail(path, "ast_edge_index",
             fmt::format("local node ids in [0, {}) for configuration {}", local, c),
             fmt::format("{} in edge {}", e64[k], k / 2));
      }
      s.edges[k] = static_cast<int32_t>(e64[k]);
    }
  }
  if (npz.has("config_feat")) {
    const NpyArray cf = get_rank(npz, "config_feat", 2);
    if (cf.shape[0] != s.num_configs)
      fail(path, "config_feat", fmt::format("shape ({}, W)", s.num_configs), cf.shape_str());
    s.config_feat_width = static_cast<int>(cf.shape[1]);
    s.config_feat = as_float32(cf);
  }
  if (npz.has("ast_lowering")) {
    const auto v = as_int64(get_rank(npz, "ast_lowering", 1), path + ": key 'ast_lowering'");
    if (v.size() != 1 || v[0] < 0) fail(path, "ast_lowering", "one non-negative version", "");
    s.lowering = v[0];
  }
  return s;
}

void save_ast(const std::string& path, const AstSet& s, bool compress) {
  std::vector<std::pair<std::string, NpyArray>> a;
  a.emplace_back("ast_node_kind", NpyArray::of<int32_t>({s.num_nodes()}, s.kinds));
  a.emplace_back("ast_node_feat", NpyArray::of<float>({s.num_nodes(), s.node_feat_width}, s.feats));
  a.emplace_back("ast_node_offsets", NpyArray::of<int64_t>({s.num_configs + 1}, s.node_offsets));
  a.emplace_back("ast_edge_index", NpyArray::of<int32_t>({s.num_edges(), 2}, s.edges));
  a.emplace_back("ast_edge_offsets", NpyArray::of<int64_t>({s.num_configs + 1}, s.edge_offsets));
  a.emplace_back("config_runtime", NpyArray::of<int64_t>({s.num_configs}, s.runtime_ns));
  if (s.config_feat_width > 0) {
    a.emplace_back("config_feat",
                   NpyArray::of<float>({s.num_configs, s.config_feat_width}, s.config_feat));
  }
  if (s.lowering > 0) a.emplace_back("ast_lowering", NpyArray::of<int64_t>({1}, {s.lowering}));
  write_npz(path, a, compress);
}

AstSet select_ast_configs(const AstSet& s, const std::vector<int64_t>& indices) {
  AstSet out;
  out.name = s.name;
  out.source = s.source;
  out.node_feat_width = s.node_feat_width;
  out.config_feat_width = s.config_feat_width;
  out.lowering = s.lowering;
  out.num_configs = static_cast<int64_t>(indices.size());
  out.node_offsets.push_back(0);
  out.edge_offsets.push_back(0);
  for (int64_t c : indices) {
    TCOST_CHECK(c >= 0 && c < s.num_configs, "config {} out of range", c);
    for (int64_t i = s.node_offsets[c]; i < s.node_offsets[c + 1]; ++i) {
      out.kinds.push_back(s.kinds[i]);
      out.feats.insert(out.feats.end(), s.feats.begin() + i * s.node_feat_width,
                       s.feats.begin() + (i + 1) * s.node_feat_width);
    }
    out.edges.insert(out.edges.end(), s.edges.begin() + 2 * s.edge_offsets[c],
                     s.edges.begin() + 2 * s.edge_offsets[c + 1]);
    out.node_offsets.push_back(out.num_nodes());
    out.edge_offsets.push_back(out.num_edges());
    out.runtime_ns.push_back(s.runtime_ns[c]);
    if (s.config_feat_width > 0) {
      out.config_feat.insert(out.config_feat.end(), s.config_feat.begin() + c * s.config_feat_width,
                             s.config_feat.begin() + (c + 1) * s.config_feat_width);
    }
  }
  return out;
}

AstSet first_ast_configs(const AstSet& s, int64_t max_configs) {
  if (max_configs <= 0 || s.num_configs <= max_configs) return s;
  std::vector<int64_t> idx(static_cast<size_t>(max_configs));
  std::iota(idx.begin(), idx.end(), 0);
  return select_ast_configs(s, idx);
}

AstSet load_trees_of(const Graph& g, const std::string& graph_file, const std::string& trees_file) {
  if (!std::filesystem::is_regular_file(trees_file))
    throw InputError(fmt::format("{}: no syntax trees for it at {}", graph_file, trees_file));
  AstSet s = load_ast(trees_file);
  check_trees_of(g, s, graph_file, trees_file);
  return s;
}

void check_trees_of(const Graph& g, const AstSet& s, const std::string& graph_name,
                    const std::string& trees_name) {
  if (s.runtime_ns != g.runtime_ns) {
    throw InputError(
        fmt::format("{} and {}: not the same configurations ({} and {}, or their runtimes differ)",
                    graph_name, trees_name, g.num_configs, s.num_configs));
  }
}

}  // namespace tcost
