#include "core/submission.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "core/error.h"
#include "core/metrics.h"
#include "core/tpugraphs_io.h"

namespace tcost {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n\"");
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(" \t\r\n\"");
  return s.substr(b, e - b + 1);
}

std::string id_key(const std::string& id) {
  const size_t colon = id.rfind(':');
  return colon == std::string::npos ? id : id.substr(colon + 1);
}

}  // namespace

std::vector<SubmissionRow> read_submission(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("{}: cannot open", path));
  std::string line;
  if (!std::getline(in, line) || trim(line) != "ID,TopConfigs") {
    throw InputError(fmt::format("{}: line 1: expected header 'ID,TopConfigs', found '{}'", path,
                                 trim(line).substr(0, 80)));
  }
  std::vector<SubmissionRow> rows;
  int64_t line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const size_t comma = line.find(',');
    if (comma == std::string::npos) {
      throw InputError(
          fmt::format("{}: line {}: expected 'ID,TopConfigs', found no comma", path, line_no));
    }
    SubmissionRow row;
    row.id = trim(line.substr(0, comma));
    if (row.id.empty()) throw InputError(fmt::format("{}: line {}: empty ID", path, line_no));
    std::stringstream list(trim(line.substr(comma + 1)));
    std::string item;
    while (std::getline(list, item, ';')) {
      const std::string t = trim(item);
      size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(t, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (t.empty() || used != t.size() || v < 0) {
        throw InputError(
            fmt::format("{}: line {}: expected a non-negative config index, found "
                        "'{}'",
                        path, line_no, t.substr(0, 40)));
      }
      row.top_configs.push_back(v);
    }
    if (row.top_configs.empty()) {
      throw InputError(
          fmt::format("{}: line {}: no config indices for '{}'", path, line_no, row.id));
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void write_submission(const std::string& path, const std::vector<SubmissionRow>& rows) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw InputError(fmt::format("{}: cannot create", path));
    out << "ID,TopConfigs\n";
    for (const auto& r : rows) {
      out << r.id << ',';
      for (size_t i = 0; i < r.top_configs.size(); ++i) out << (i ? ";" : "") << r.top_configs[i];
      out << '\n';
    }
    if (!out) throw InputError(fmt::format("{}: write failed", path));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot write: {}", path, ec.message()));
}

GraphScore score_graph(const Graph& g, const std::vector<double>& predicted_cost) {
  TCOST_CHECK(static_cast<int64_t>(predicted_cost.size()) == g.num_configs,
              "{} predictions for {} configs", predicted_cost.size(), g.num_configs);
  GraphScore s;
  s.id = g.name;
  s.collection = g.collection;
  s.configs = g.num_configs;
  s.listed = g.num_configs;
  const std::vector<double> truth = g.targets();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (g.collection == Collection::kLayout) {
    s.kendall_tau = kendall_tau_b(predicted_cost, truth);
    s.opa = ordered_pair_accuracy(predicted_cost, truth);
  } else {
    s.kendall_tau = s.opa = nan;
  }
  s.slowdown_1 = slowdown_at_k(predicted_cost, truth, 1);
  s.slowdown_5 = slowdown_at_k(predicted_cost, truth, 5);
  s.slowdown_10 = slowdown_at_k(predicted_cost, truth, 10);
  return s;
}

ScoreReport score_submission(const std::vector<std::string>& files,
                             const std::vector<SubmissionRow>& rows, const std::string& pred_path) {
  std::map<std::string, std::string> file_of;  // stem -> path
  for (const auto& f : files) {
    const std::string stem = std::filesystem::path(f).stem().string();
    if (!file_of.emplace(stem, f).second) {
      throw InputError(
          fmt::format("two data files share the ID '{}': {} and {}", stem, file_of[stem], f));
    }
  }
  std::map<std::string, const SubmissionRow*> row_of;
  for (const auto& r : rows) {
    const std::string key = id_key(r.id);
    if (!file_of.count(key)) {
      throw InputError(
          fmt::format("{}: ID '{}' matches no .npz file of the data", pred_path, r.id));
    }
    if (!row_of.emplace(key, &r).second) {
      throw InputError(fmt::format("{}: ID '{}' appears twice", pred_path, r.id));
    }
  }
  std::vector<GraphScore> scores;
  for (const auto& [stem, path] : file_of) {
    auto it = row_of.find(stem);
    if (it == row_of.end()) {
      throw InputError(fmt::format("{}: no row for graph '{}' ({})", pred_path, stem, path));
    }
    const Graph g = load_graph(path);
    const auto& top = it->second->top_configs;
    // Predicted cost = position in the list; unlisted configs tie after all listed ones.
    std::vector<double> cost(static_cast<size_t>(g.num_configs), static_cast<double>(top.size()));
    std::vector<char> seen(static_cast<size_t>(g.num_configs), 0);
    for (size_t pos = 0; pos < top.size(); ++pos) {
      const int64_t c = top[pos];
      if (c >= g.num_configs) {
        throw InputError(
            fmt::format("{}: ID '{}': config index {} out of range (the graph has {} "
                        "configs)",
                        pred_path, it->second->id, c, g.num_configs));
      }
      if (seen[c]) {
        throw InputError(
            fmt::format("{}: ID '{}': config index {} listed twice", pred_path, it->second->id, c));
      }
      seen[c] = 1;
      cost[c] = static_cast<double>(pos);
    }
    GraphScore s = score_graph(g, cost);
    s.listed = static_cast<int64_t>(top.size());
    if (g.collection == Collection::kTile) {
      // slowdown@k judges only what the row lists: k is capped at the list's length.
      const std::vector<double> truth = g.targets();
      s.slowdown_5 = slowdown_at_k(cost, truth, std::min<int64_t>(5, s.listed));
      s.slowdown_10 = slowdown_at_k(cost, truth, std::min<int64_t>(10, s.listed));
    }
    scores.push_back(std::move(s));
  }
  return summarize_scores(std::move(scores));
}

ScoreReport summarize_scores(std::vector<GraphScore> per_graph) {
  ScoreReport report;
  std::vector<double> taus, opas, s1, s5, s10;
  for (const GraphScore& s : per_graph) {
    if (s.collection != Collection::kTile) {  // layout and ast: rankings of all configs
      ++report.layout_graphs;
      taus.push_back(s.kendall_tau);
      opas.push_back(s.opa);
    } else {
      ++report.tile_graphs;
      s1.push_back(s.slowdown_1);
      s5.push_back(s.slowdown_5);
      s10.push_back(s.slowdown_10);
    }
  }
  report.per_graph = std::move(per_graph);
  report.mean_kendall_tau = mean_ignoring_nan(taus);
  report.mean_opa = mean_ignoring_nan(opas);
  report.mean_slowdown_1 = mean_ignoring_nan(s1);
  report.mean_slowdown_5 = mean_ignoring_nan(s5);
  report.mean_slowdown_10 = mean_ignoring_nan(s10);
  return report;
}

}  // namespace tcost
