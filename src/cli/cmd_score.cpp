// tcost score --data DIR_OR_FILE --pred PRED.csv [--json]: scores a submission-format ranking.
#include <cmath>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/submission.h"

namespace tcost::cli {
namespace {

struct ScoreOptions {
  std::string data;  // a .npz file or a directory searched recursively
  std::string pred;  // CSV "ID,TopConfigs"
  bool json = false;
};

// NaN (an undefined metric) becomes JSON null.
nlohmann::json num(double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); }

void run_score(const ScoreOptions& o) {
  const auto files = list_npz_files(o.data);
  if (files.empty()) throw InputError(fmt::format("{}: no .npz files", o.data));
  const ScoreReport r = score_submission(files, read_submission(o.pred), o.pred);
  if (o.json) {
    nlohmann::json per = nlohmann::json::array();
    for (const auto& s : r.per_graph) {
      nlohmann::json j = {{"id", s.id},
                          {"collection", collection_name(s.collection)},
                          {"configs", s.configs},
                          {"listed", s.listed}};
      if (s.collection == Collection::kLayout) {
        j["kendall_tau"] = num(s.kendall_tau);
        j["opa"] = num(s.opa);
      } else {
        j["slowdown_1"] = num(s.slowdown_1);
        j["slowdown_5"] = num(s.slowdown_5);
        j["slowdown_10"] = num(s.slowdown_10);
      }
      per.push_back(j);
    }
    nlohmann::json out = {
        {"per_graph", per}, {"layout_graphs", r.layout_graphs}, {"tile_graphs", r.tile_graphs}};
    if (r.layout_graphs > 0) {
      out["mean_kendall_tau"] = num(r.mean_kendall_tau);
      out["mean_opa"] = num(r.mean_opa);
    }
    if (r.tile_graphs > 0) {
      out["mean_slowdown_1"] = num(r.mean_slowdown_1);
      out["mean_slowdown_5"] = num(r.mean_slowdown_5);
      out["mean_slowdown_10"] = num(r.mean_slowdown_10);
    }
    std::cout << out.dump() << '\n';
    return;
  }
  for (const auto& s : r.per_graph) {
    if (s.collection == Collection::kLayout) {
      fmt::print("{:<40} layout configs={:<6} listed={:<6} kendall_tau={:.4f} opa={:.4f}\n", s.id,
                 s.configs, s.listed, s.kendall_tau, s.opa);
    } else {
      fmt::print(
          "{:<40} tile   configs={:<6} listed={:<6} slowdown@1={:.4f} @5={:.4f} @10={:.4f}\n", s.id,
          s.configs, s.listed, s.slowdown_1, s.slowdown_5, s.slowdown_10);
    }
  }
  if (r.layout_graphs > 0) {
    fmt::print("layout: {} graphs, mean kendall_tau={:.4f}, mean opa={:.4f}\n", r.layout_graphs,
               r.mean_kendall_tau, r.mean_opa);
  }
  if (r.tile_graphs > 0) {
    fmt::print(
        "tile: {} graphs, mean slowdown@1={:.4f} @5={:.4f} @10={:.4f} (competition score "
        "2-min(top5)/min = {:.4f})\n",
        r.tile_graphs, r.mean_slowdown_1, r.mean_slowdown_5, r.mean_slowdown_10,
        1.0 - r.mean_slowdown_5);
  }
}

}  // namespace

void register_score(CLI::App& app) {
  auto o = std::make_shared<ScoreOptions>();
  auto* cmd = app.add_subcommand("score", "Score predictions in the competition CSV format");
  cmd->add_option("--data", o->data, "A .npz file or a directory of them")->required();
  cmd->add_option("--pred", o->pred, "CSV with header ID,TopConfigs")->required();
  cmd->add_flag("--json", o->json, "One JSON object with mean_kendall_tau and per_graph");
  cmd->callback([o] { run_score(*o); });
}

}  // namespace tcost::cli
