// tcost info PATH... [--json]: a summary of each graph file.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/tpugraphs_io.h"

namespace tcost::cli {
namespace {

struct InfoOptions {
  std::vector<std::string> paths;  // files or directories (searched recursively for .npz)
  bool json = false;               // one JSON object per file per line
};

int64_t median(std::vector<int64_t> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<int64_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Syntax-tree files: one tree per configuration.
void print_ast(const std::string& f, bool json) {
  const AstSet s = load_ast(f);
  std::vector<int64_t> rt = s.runtime_ns;
  const int64_t lo = *std::min_element(rt.begin(), rt.end());
  const int64_t hi = *std::max_element(rt.begin(), rt.end());
  const int64_t med = median(rt);
  if (json) {
    nlohmann::json j = {{"file", f},
                        {"collection", "ast"},
                        {"nodes", s.num_nodes()},
                        {"edges", s.num_edges()},
                        {"configs", s.num_configs},
                        {"config_nodes", 0},
                        {"node_feat_width", s.node_feat_width},
                        {"config_feat_width", s.config_feat_width},
                        {"runtime_min_ns", lo},
                        {"runtime_median_ns", med},
                        {"runtime_max_ns", hi}};
    std::cout << j.dump() << '\n';
  } else {
    fmt::print("{:<40} {:>10} {:>7} {:>7} {:>7} {:>6} {:>5} {:>12} {:>12} {:>12} {:>5}\n", f, "ast",
               s.num_nodes(), s.num_edges(), s.num_configs, 0, s.config_feat_width, lo, med, hi,
               "-");
  }
}

void run_info(const InfoOptions& o) {
  std::vector<std::string> files;
  for (const auto& p : o.paths) {
    auto f = list_npz_files(p);
    if (f.empty()) throw InputError(fmt::format("{}: no .npz files", p));
    files.insert(files.end(), f.begin(), f.end());
  }
  if (!o.json) {
    fmt::print("{:<40} {:>10} {:>7} {:>7} {:>7} {:>6} {:>5} {:>12} {:>12} {:>12} {:>5}\n", "file",
               "collection", "nodes", "edges", "configs", "cnodes", "width", "rt_min_ns",
               "rt_median_ns", "rt_max_ns", "dups");
  }
  for (const auto& f : files) {
    if (is_ast_file(f)) {
      print_ast(f, o.json);
      continue;
    }
    const Graph g = load_graph(f);
    const int64_t lo = *std::min_element(g.runtime_ns.begin(), g.runtime_ns.end());
    const int64_t hi = *std::max_element(g.runtime_ns.begin(), g.runtime_ns.end());
    const int64_t med = median(g.runtime_ns);
    const int64_t dups = count_duplicate_configs(g);
    if (o.json) {
      nlohmann::json j = {
          {"file", f},
          {"collection", collection_name(g.collection)},
          {"nodes", g.num_nodes},
          {"edges", g.num_edges()},
          {"configs", g.num_configs},
          {"config_nodes", g.collection == Collection::kLayout ? g.num_config_nodes() : 0},
          {"config_feat_width", g.config_feat_width},
          {"node_feat_width", g.node_feat_width},
          {"runtime_min_ns", lo},
          {"runtime_median_ns", med},
          {"runtime_max_ns", hi},
          {"duplicate_configs", dups}};
      std::cout << j.dump() << '\n';
    } else {
      fmt::print("{:<40} {:>10} {:>7} {:>7} {:>7} {:>6} {:>5} {:>12} {:>12} {:>12} {:>5}\n", f,
                 collection_name(g.collection), g.num_nodes, g.num_edges(), g.num_configs,
                 g.collection == Collection::kLayout ? g.num_config_nodes() : 0,
                 g.config_feat_width, lo, med, hi, dups);
    }
  }
}

}  // namespace

void register_info(CLI::App& app) {
  auto o = std::make_shared<InfoOptions>();
  auto* cmd = app.add_subcommand("info", "Summarise graph files (.npz) or dataset directories");
  cmd->add_option("paths", o->paths, "Files or directories")->required();
  cmd->add_flag("--json", o->json, "One JSON object per file per line");
  cmd->callback([o] { run_info(*o); });
}

}  // namespace tcost::cli
