// The public competition's submission format and its scoring.
//   A CSV with header "ID,TopConfigs"; ID is the graph's file stem (a colon-separated ID such as
//   "layout:xla:default:NAME" matches by its last field); TopConfigs lists configuration indices
//   separated by ';', predicted fastest first.
//   read_submission / write_submission - parse and write it, errors naming file and line.
//   score_submission - Kendall tau-b and OPA for layout graphs, slowdown@1/5/10 for tile graphs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tcost {

struct SubmissionRow {
  std::string id;
  std::vector<int64_t> top_configs;  // fastest first
};

std::vector<SubmissionRow> read_submission(const std::string& path);
void write_submission(const std::string& path, const std::vector<SubmissionRow>& rows);

struct GraphScore {
  std::string id;
  Collection collection = Collection::kLayout;
  int64_t configs = 0;
  int64_t listed = 0;      // configurations the row ranks; the rest tie after them
  double kendall_tau = 0;  // layout only (NaN when all runtimes tie)
  double opa = 0;          // layout only
  double slowdown_1 = 0;   // every graph (the tile metric; for rankings, of the full ranking)
  double slowdown_5 = 0;
  double slowdown_10 = 0;
};

struct ScoreReport {
  std::vector<GraphScore> per_graph;
  int64_t layout_graphs = 0;  // graphs ranked in full: layout (and ast) graphs
  int64_t tile_graphs = 0;
  double mean_kendall_tau = 0, mean_opa = 0;                              // over layout graphs
  double mean_slowdown_1 = 0, mean_slowdown_5 = 0, mean_slowdown_10 = 0;  // over tile graphs
};

// Scores a ranking per graph. Every row must name a graph of `files`, every graph must have a
// row; indices must be in range and distinct.
ScoreReport score_submission(const std::vector<std::string>& files,
                             const std::vector<SubmissionRow>& rows, const std::string& pred_path);

// Scores one graph from predicted costs (lower = faster); shared by `score` and `eval`.
GraphScore score_graph(const Graph& g, const std::vector<double>& predicted_cost);
// Counts and means (NaN-skipping) over per-graph scores.
ScoreReport summarize_scores(std::vector<GraphScore> per_graph);

}  // namespace tcost
