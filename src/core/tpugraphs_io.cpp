#include "core/tpugraphs_io.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/ranges.h>

#include "core/error.h"
#include "core/opcodes.h"

namespace tcost {
namespace {

// Accessors that check one key's rank and shape and convert its dtype.
class Reader {
 public:
  explicit Reader(const NpzFile& npz) : npz_(npz) {}

  NpyArray get(const std::string& key, int rank) const {
    NpyArray a = npz_.get(key);
    if (a.rank() != rank) {
      fail(key, fmt::format("rank {}", rank), fmt::format("shape {}", a.shape_str()));
    }
    return a;
  }
  std::string where(const std::string& key) const {
    return fmt::format("{}: key '{}'", npz_.path(), key);
  }
  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const std::string& found) const {
    throw InputError(fmt::format("{}: expected {}, found {}", where(key), expected, found));
  }
  void expect_dim(const std::string& key, const NpyArray& a, int axis, int64_t want,
                  const std::string& meaning) const {
    if (a.shape[axis] != want) {
      fail(key, fmt::format("dimension {} = {} ({})", axis, want, meaning),
           fmt::format("shape {}", a.shape_str()));
    }
  }
  std::vector<int32_t> int32s(const std::string& key, const NpyArray& a) const {
    const auto v = as_int64(a, where(key));
    std::vector<int32_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] < std::numeric_limits<int32_t>::min() ||
          v[i] > std::numeric_limits<int32_t>::max()) {
        fail(key, "values that fit int32", fmt::format("{} at index {}", v[i], i));
      }
      out[i] = static_cast<int32_t>(v[i]);
    }
    return out;
  }
  std::vector<float> floats(const std::string& key, const NpyArray& a) const {
    auto v = as_float32(a);
    for (size_t i = 0; i < v.size(); ++i) {
      if (!std::isfinite(v[i])) fail(key, "finite values", fmt::format("{} at index {}", v[i], i));
    }
    return v;
  }
  // Runtimes in ns: integers, or floats rounded to the nearest ns; all finite and positive.
  std::vector<int64_t> runtimes(const std::string& key, const NpyArray& a) const {
    std::vector<int64_t> out(static_cast<size_t>(a.size()));
    if (dtype_is_float(a.dtype)) {
      const auto v = as_float64(a);
      for (size_t i = 0; i < v.size(); ++i) {
        if (!std::isfinite(v[i]) || v[i] < 0.5 || v[i] > 9.2e18) {
          fail(key, "finite positive runtimes (ns)", fmt::format("{} at index {}", v[i], i));
        }
        out[i] = static_cast<int64_t>(std::llround(v[i]));
      }
    } else {
      out = as_int64(a, where(key));
      for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] <= 0)
          fail(key, "positive runtimes (ns)", fmt::format("{} at index {}", out[i], i));
      }
    }
    return out;
  }

 private:
  const NpzFile& npz_;
};

Collection collection_of(const NpzFile& npz) {
  const bool layout = npz.has("node_config_ids") || npz.has("node_config_feat");
  const bool tile = npz.has("config_feat");
  if (layout && tile) {
    throw InputError(
        fmt::format("{}: has both layout keys (node_config_ids) and tile keys "
                    "(config_feat); expected one collection",
                    npz.path()));
  }
  if (!layout && !tile) {
    throw InputError(
        fmt::format("{}: not a TpuGraphs file: expected key 'node_config_feat' "
                    "(layout) or 'config_feat' (tile), found keys [{}]",
                    npz.path(), fmt::join(npz.keys(), ", ")));
  }
  return layout ? Collection::kLayout : Collection::kTile;
}

}  // namespace

Collection peek_collection(const std::string& path) { return collection_of(NpzFile(path)); }

Graph load_graph(const std::string& path, const LoadOptions& options) {
  return read_graph(NpzFile(path, options.npz));
}

Graph read_graph(const NpzFile& npz) {
  Reader r(npz);
  Graph g;
  g.source = npz.path();
  g.name = std::filesystem::path(npz.path()).stem().string();
  g.collection = collection_of(npz);

  NpyArray nf = r.get("node_feat", 2);
  g.num_nodes = nf.shape[0];
  if (g.num_nodes < 1 || nf.shape[1] < 1) {
    r.fail("node_feat", "shape (n >= 1, features >= 1)", "shape " + nf.shape_str());
  }
  if (nf.shape[1] > std::numeric_limits<int>::max())
    r.fail("node_feat", "a sane width", nf.shape_str());
  g.node_feat_width = static_cast<int>(nf.shape[1]);
  g.node_feat = r.floats("node_feat", nf);

  NpyArray op = r.get("node_opcode", 1);
  r.expect_dim("node_opcode", op, 0, g.num_nodes, "n, the rows of node_feat");
  g.node_opcode = r.int32s("node_opcode", op);
  for (size_t i = 0; i < g.node_opcode.size(); ++i) {
    if (g.node_opcode[i] < 0 || g.node_opcode[i] >= kNumOpcodes) {
      r.fail("node_opcode", fmt::format("opcode ids in [0, {}]", kNumOpcodes - 1),
             fmt::format("{} at node {}", g.node_opcode[i], i));
    }
  }

  NpyArray ei = npz.get("edge_index");
  if (!(ei.rank() == 2 && ei.shape[1] == 2) && !(ei.rank() == 1 && ei.shape[0] == 0)) {
    r.fail("edge_index", "shape (m, 2)", "shape " + ei.shape_str());
  }
  g.edges = r.int32s("edge_index", ei);
  for (size_t i = 0; i < g.edges.size(); ++i) {
    if (g.edges[i] < 0 || g.edges[i] >= g.num_nodes) {
      r.fail("edge_index", fmt::format("node ids in [0, {})", g.num_nodes),
             fmt::format("{} in edge {}", g.edges[i], i / 2));
    }
  }

  if (npz.has("node_splits")) {
    NpyArray ns = npz.get("node_splits");
    if (ns.rank() > 2 || (ns.rank() == 2 && ns.shape[0] != 1)) {
      r.fail("node_splits", "shape (s,) or (1, s)", "shape " + ns.shape_str());
    }
    g.node_splits = as_int64(ns, r.where("node_splits"));
    for (int64_t s : g.node_splits) {
      if (s < 0 || s > g.num_nodes) {
        r.fail("node_splits", fmt::format("values in [0, {}]", g.num_nodes), std::to_string(s));
      }
    }
  }

  NpyArray rt = r.get("config_runtime", 1);
  g.num_configs = rt.shape[0];
  if (g.num_configs < 1) r.fail("config_runtime", "at least one configuration", "shape (0,)");
  g.runtime_ns = r.runtimes("config_runtime", rt);

  if (g.collection == Collection::kLayout) {
    NpyArray ids = r.get("node_config_ids", 1);
    g.config_node_ids = r.int32s("node_config_ids", ids);
    std::vector<char> seen(static_cast<size_t>(g.num_nodes), 0);
    for (size_t i = 0; i < g.config_node_ids.size(); ++i) {
      const int32_t id = g.config_node_ids[i];
      if (id < 0 || id >= g.num_nodes) {
        r.fail("node_config_ids", fmt::format("node ids in [0, {})", g.num_nodes),
               fmt::format("{} at position {}", id, i));
      }
      if (seen[id]) {
        r.fail("node_config_ids", "distinct node ids",
               fmt::format("{} repeated at position {}", id, i));
      }
      seen[id] = 1;
    }
    NpyArray cf = r.get("node_config_feat", 3);
    r.expect_dim("node_config_feat", cf, 0, g.num_configs, "c, the length of config_runtime");
    r.expect_dim("node_config_feat", cf, 1, g.num_config_nodes(),
                 "nc, the length of node_config_ids");
    if (cf.shape[2] < 1 || cf.shape[2] > 4096) {
      r.fail("node_config_feat", "a feature width in [1, 4096]", "shape " + cf.shape_str());
    }
    g.config_feat_width = static_cast<int>(cf.shape[2]);
    g.config_feat = r.floats("node_config_feat", cf);
  } else {
    NpyArray cf = r.get("config_feat", 2);
    r.expect_dim("config_feat", cf, 0, g.num_configs, "c, the length of config_runtime");
    if (cf.shape[1] < 1 || cf.shape[1] > 4096) {
      r.fail("config_feat", "a feature width in [1, 4096]", "shape " + cf.shape_str());
    }
    g.config_feat_width = static_cast<int>(cf.shape[1]);
    g.config_feat = r.floats("config_feat", cf);
    NpyArray nz = r.get("config_runtime_normalizers", 1);
    r.expect_dim("config_runtime_normalizers", nz, 0, g.num_configs,
                 "c, the length of config_runtime");
    g.normalizer_ns = r.runtimes("config_runtime_normalizers", nz);
  }
  return g;
}

void save_graph(const std::string& path, const Graph& g, bool compress) {
  std::vector<std::pair<std::string, NpyArray>> a;
  a.emplace_back("node_feat", NpyArray::of<float>({g.num_nodes, g.node_feat_width}, g.node_feat));
  a.emplace_back("node_opcode", NpyArray::of<int32_t>({g.num_nodes}, g.node_opcode));
  a.emplace_back("edge_index", NpyArray::of<int32_t>({g.num_edges(), 2}, g.edges));
  if (g.collection == Collection::kLayout) {
    a.emplace_back("node_config_ids",
                   NpyArray::of<int32_t>({g.num_config_nodes()}, g.config_node_ids));
    a.emplace_back("node_config_feat",
                   NpyArray::of<float>({g.num_configs, g.num_config_nodes(), g.config_feat_width},
                                       g.config_feat));
  } else {
    a.emplace_back("config_feat",
                   NpyArray::of<float>({g.num_configs, g.config_feat_width}, g.config_feat));
    a.emplace_back("config_runtime_normalizers",
                   NpyArray::of<int64_t>({g.num_configs}, g.normalizer_ns));
  }
  a.emplace_back("config_runtime", NpyArray::of<int64_t>({g.num_configs}, g.runtime_ns));
  if (!g.node_splits.empty()) {
    a.emplace_back("node_splits", NpyArray::of<int64_t>(
                                      {static_cast<int64_t>(g.node_splits.size())}, g.node_splits));
  }
  write_npz(path, a, compress);
}

}  // namespace tcost
