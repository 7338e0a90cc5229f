// Ensembles behind the in-memory cost-model interface (train/cost_model.h), and the interface's
// view dispatch. No LibTorch here: members are CostModels.
//   EnsembleCostModel - members' costs standardised per program and averaged with weights.
//   ensemble files    - JSON naming member checkpoints; load_cost_model reads them.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "train/ensemble.h"

namespace tcost::train {

namespace fs = std::filesystem;

void require_views(const Views& v, bool graph, bool trees, const std::string& model) {
  const bool no_graph = graph && v.graph == nullptr;
  const bool no_trees = trees && v.ast == nullptr;
  if (!no_graph && !no_trees) return;
  throw InputError(fmt::format("{} reads {}; {} not given", model,
                               graph && trees ? "layout graphs and their syntax trees"
                               : graph        ? "graphs"
                                              : "syntax trees",
                               no_graph && no_trees ? "neither was"
                               : no_graph           ? "the graph was"
                                                    : "the trees were"));
}

std::vector<double> CostModel::score(const Views& v) {
  const bool trees = collection() == Collection::kAst;
  require_views(v, !trees, trees, name());
  return trees ? score(*v.ast) : score(*v.graph);
}

namespace {

constexpr const char* kFormat = "tcost-ensemble";

// A member checkpoint named in an ensemble file: relative paths are read from the file's
// directory.
std::string member_path(const std::string& ensemble_file, const std::string& checkpoint) {
  if (fs::path(checkpoint).is_absolute()) return checkpoint;
  return (fs::path(ensemble_file).parent_path() / checkpoint).string();
}

class EnsembleCostModel final : public CostModel {
 public:
  EnsembleCostModel(std::vector<std::unique_ptr<CostModel>> members, std::vector<double> weights)
      : members_(std::move(members)), weights_(std::move(weights)) {
    if (members_.empty()) throw UsageError("an ensemble needs at least one member");
    if (weights_.empty()) weights_.assign(members_.size(), 1.0);
    if (weights_.size() != members_.size())
      throw UsageError(fmt::format("an ensemble of {} members got {} weights", members_.size(),
                                   weights_.size()));
    for (double w : weights_) {
      if (!(w > 0) || !std::isfinite(w))
        throw UsageError(fmt::format("ensemble weights must be positive, got {}", w));
    }
    bool layout = false, tile = false;
    for (const auto& m : members_) {
      for (Collection c : m->collections()) {
        layout = layout || c == Collection::kLayout;
        tile = tile || c == Collection::kTile;
        ast_ = ast_ || c == Collection::kAst;
      }
    }
    if (layout && tile) throw UsageError("an ensemble cannot mix layout and tile models");
    graph_collection_ = tile ? Collection::kTile : Collection::kLayout;
    graphs_ = layout || tile;
  }

  std::string name() const override { return "ensemble"; }
  Collection collection() const override { return ast_ ? Collection::kAst : graph_collection_; }
  std::vector<Collection> collections() const override {
    std::vector<Collection> out;
    if (graphs_) out.push_back(graph_collection_);
    if (ast_) out.push_back(Collection::kAst);
    return out;
  }

  std::vector<double> score(const Graph& g) override {
    if (ast_) {
      throw InputError(fmt::format(
          "{}: the ensemble has members that read syntax trees; score the graph together with "
          "its syntax trees (tcost rank --ast, or tcost eval --data on a directory holding layout/ "
          "and ast/)",
          g.name));
    }
    return score(Views{&g, nullptr});
  }
  std::vector<double> score(const AstSet& s) override {
    if (graphs_) {
      throw InputError(fmt::format(
          "{}: the ensemble has members that read graphs; score the syntax trees together with "
          "the layout graph",
          s.name));
    }
    return score(Views{nullptr, &s});
  }
  std::vector<double> score(const Views& v) override {
    std::vector<double> sum;
    double total = 0;
    for (size_t i = 0; i < members_.size(); ++i) {
      const auto z = standardised(members_[i]->score(v));
      if (i == 0) sum.assign(z.size(), 0.0);
      if (z.size() != sum.size()) {
        throw InputError(
            fmt::format("ensemble members scored {} and {} configurations: the views "
                        "do not hold the same configurations",
                        sum.size(), z.size()));
      }
      for (size_t k = 0; k < z.size(); ++k) sum[k] += weights_[i] * z[k];
      total += weights_[i];
    }
    for (double& x : sum) x /= total;
    return sum;
  }

  void refit(const std::vector<Views>& measured, const RefitOptions& o) override {
    for (auto& m : members_) m->refit(measured, o);
  }

  void save(const std::string& path) const override {
    std::vector<std::string> files;
    for (size_t i = 0; i < members_.size(); ++i) {
      const std::string member = fmt::format("{}.member{}", path, i);
      members_[i]->save(member);
      files.push_back(fs::path(member).filename().string());
    }
    write_file(path, files, weights_);
  }

  const std::vector<double>& weights() const { return weights_; }

  // The ensemble file: member paths as given, weights.
  static void write_file(const std::string& path, const std::vector<std::string>& checkpoints,
                         const std::vector<double>& weights) {
    nlohmann::json j;
    j["format"] = kFormat;
    j["combine"] = "mean of standardised costs";
    j["members"] = nlohmann::json::array();
    for (size_t i = 0; i < checkpoints.size(); ++i)
      j["members"].push_back({{"checkpoint", checkpoints[i]}, {"weight", weights[i]}});
    const std::string tmp = path + ".tmp";
    {
      std::ofstream f(tmp);
      f << j.dump(2) << "\n";
      if (!f) throw InputError(fmt::format("{}: cannot write the ensemble file", path));
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec)
      throw InputError(fmt::format("{}: cannot write the ensemble file: {}", path, ec.message()));
  }

 private:
  std::vector<std::unique_ptr<CostModel>> members_;
  std::vector<double> weights_;
  bool ast_ = false, graphs_ = false;
  Collection graph_collection_ = Collection::kLayout;
};

}  // namespace

std::unique_ptr<CostModel> make_ensemble(std::vector<std::unique_ptr<CostModel>> members,
                                         std::vector<double> weights) {
  return std::make_unique<EnsembleCostModel>(std::move(members), std::move(weights));
}

void write_ensemble(const std::string& path, const std::vector<std::string>& checkpoints,
                    const std::vector<double>& weights) {
  std::vector<std::unique_ptr<CostModel>> members;
  for (const auto& c : checkpoints) {
    members.push_back(load_cost_model(member_path(path, c)));
  }
  // The same checks as loading; the weights as the ensemble completes them (equal by default).
  const EnsembleCostModel check(std::move(members), weights);
  EnsembleCostModel::write_file(path, checkpoints, check.weights());
}

bool is_ensemble_file(const std::string& path) {
  std::ifstream f(path);
  char c = 0;
  while (f.get(c) && std::isspace(static_cast<unsigned char>(c))) {
  }
  return f && c == '{';
}

std::unique_ptr<CostModel> load_ensemble(const std::string& path, int threads) {
  // Ensembles may name ensembles; a cycle of them ends here instead of in a stack overflow.
  thread_local int depth = 0;
  if (depth >= 8)
    throw InputError(fmt::format("{}: ensembles nested more than 8 deep (a cycle?)", path));
  struct Nest {
    Nest() { ++depth; }
    ~Nest() { --depth; }
  } nest;
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: the ensemble file is not valid JSON: {}", path, e.what()));
  }
  if (!j.is_object() || j.value("format", "") != kFormat || !j.contains("members") ||
      !j["members"].is_array()) {
    throw InputError(
        fmt::format("{}: not a tcost ensemble file (format \"{}\" with members)", path, kFormat));
  }
  std::vector<std::unique_ptr<CostModel>> members;
  std::vector<double> weights;
  for (const auto& m : j["members"]) {
    if (!m.is_object() || !m.contains("checkpoint") || !m["checkpoint"].is_string())
      throw InputError(fmt::format("{}: an ensemble member without a checkpoint path", path));
    const std::string c = m["checkpoint"].get<std::string>();
    members.push_back(load_cost_model(member_path(path, c), threads));
    const auto& w = m.contains("weight") ? m["weight"] : nlohmann::json(1.0);
    if (!w.is_number())
      throw InputError(fmt::format("{}: the weight of {} is not a number", path, c));
    weights.push_back(w.get<double>());
  }
  try {
    return make_ensemble(std::move(members), std::move(weights));
  } catch (const UsageError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
}

std::vector<double> standardised(std::vector<double> c) {
  if (c.empty()) return c;
  const double n = static_cast<double>(c.size());
  const double mean = std::accumulate(c.begin(), c.end(), 0.0) / n;
  double var = 0;
  for (double x : c) var += (x - mean) * (x - mean);
  const double sd = std::sqrt(var / n);
  for (double& x : c) x = sd > 0 && std::isfinite(sd) ? (x - mean) / sd : 0.0;
  return c;
}

}  // namespace tcost::train
