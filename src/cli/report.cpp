#include "cli/report.h"

#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tcost::cli {
namespace {

// NaN (an undefined metric) becomes JSON null.
nlohmann::json num(double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); }

}  // namespace

void print_report(const ScoreReport& r, bool json) {
  if (json) {
    nlohmann::json per = nlohmann::json::array();
    for (const auto& s : r.per_graph) {
      nlohmann::json j = {{"id", s.id},
                          {"collection", collection_name(s.collection)},
                          {"configs", s.configs},
                          {"listed", s.listed}};
      if (s.collection != Collection::kTile) {
        j["kendall_tau"] = num(s.kendall_tau);
        j["opa"] = num(s.opa);
      }
      j["slowdown_1"] = num(s.slowdown_1);
      j["slowdown_5"] = num(s.slowdown_5);
      j["slowdown_10"] = num(s.slowdown_10);
      per.push_back(j);
    }
    nlohmann::json out = {
        {"per_graph", per},
        {"layout_graphs", r.layout_graphs},
        {"tile_graphs", r.tile_graphs},
        {"mean_kendall_tau", r.layout_graphs > 0 ? num(r.mean_kendall_tau) : nullptr},
        {"mean_opa", r.layout_graphs > 0 ? num(r.mean_opa) : nullptr}};
    if (r.tile_graphs > 0) {
      out["mean_slowdown_1"] = num(r.mean_slowdown_1);
      out["mean_slowdown_5"] = num(r.mean_slowdown_5);
      out["mean_slowdown_10"] = num(r.mean_slowdown_10);
    }
    std::cout << out.dump() << '\n';
    return;
  }
  for (const auto& s : r.per_graph) {
    if (s.collection != Collection::kTile) {
      fmt::print("{:<40} {:<6} configs={:<6} listed={:<6} kendall_tau={:.4f} opa={:.4f}\n", s.id,
                 collection_name(s.collection), s.configs, s.listed, s.kendall_tau, s.opa);
    } else {
      fmt::print(
          "{:<40} tile   configs={:<6} listed={:<6} slowdown@1={:.4f} @5={:.4f} @10={:.4f}\n", s.id,
          s.configs, s.listed, s.slowdown_1, s.slowdown_5, s.slowdown_10);
    }
  }
  if (r.layout_graphs > 0) {
    // Ranked collections: layout graphs or syntax-tree sets.
    const bool ast = !r.per_graph.empty() && r.per_graph.front().collection == Collection::kAst;
    fmt::print("{}: {} graphs, mean kendall_tau={:.4f}, mean opa={:.4f}\n", ast ? "ast" : "layout",
               r.layout_graphs, r.mean_kendall_tau, r.mean_opa);
  }
  if (r.tile_graphs > 0) {
    fmt::print(
        "tile: {} graphs, mean slowdown@1={:.4f} @5={:.4f} @10={:.4f} (competition score "
        "2-min(top5)/min = {:.4f})\n",
        r.tile_graphs, r.mean_slowdown_1, r.mean_slowdown_5, r.mean_slowdown_10,
        1.0 - r.mean_slowdown_5);
  }
}

}  // namespace tcost::cli
