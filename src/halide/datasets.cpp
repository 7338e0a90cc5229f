#include "halide/datasets.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/ast.h"
#include "core/dataset.h"
#include "core/error.h"
#include "core/tpugraphs_io.h"
#include "halide/featurize.h"

namespace fs = std::filesystem;

namespace tcost::halide {

std::map<std::string, std::vector<size_t>> first_pass_by_program(const ResultLog& log) {
  std::map<std::string, std::vector<size_t>> out;
  const auto& records = log.records();
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& rec = records[i];
    if (rec.value("pass", 1) == 1 && rec.value("ok", false))
      out[rec.value("instance", "")].push_back(i);
  }
  return out;
}

std::string repeat_key(const std::string& key, int k) {
  return "repeat|" + std::to_string(k) + "|" + key;
}

std::string session_key(const std::string& session, const std::string& key) {
  return "session|" + session + "|" + key;
}

std::vector<const nlohmann::json*> passes_of(const ResultLog& log, const nlohmann::json& record) {
  std::vector<const nlohmann::json*> out{&record};
  const std::string key = record.at("key").get<std::string>();
  for (int k = 2;; ++k) {
    const nlohmann::json* r = log.find(repeat_key(key, k));
    if (r == nullptr) break;
    out.push_back(r);
  }
  return out;
}

bool MeasuredOn::matches(const nlohmann::json& record) const {
  return (target.empty() || record.value("target", "") == target) &&
         (cpu.empty() || record.value("cpu", "") == cpu);
}

int passes_under(const ResultLog& log, const nlohmann::json& record, const MeasuredOn& on,
                 bool ok_only) {
  int n = 0;
  for (const auto* r : passes_of(log, record))
    n += on.matches(*r) && (!ok_only || r->value("ok", false)) ? 1 : 0;
  return n;
}

RunStatistic parse_run_statistic(const std::string& name) {
  if (name == "best-run" || name == run_statistic_label(RunStatistic::best_run))
    return RunStatistic::best_run;
  if (name == "median-run" || name == run_statistic_label(RunStatistic::median_run))
    return RunStatistic::median_run;
  throw InputError(fmt::format("unknown run statistic '{}' (best-run or median-run)", name));
}

std::string run_statistic_label(RunStatistic s) {
  return s == RunStatistic::median_run ? "median run (ns)" : "best run (ns)";
}

double runtime_of_passes(const ResultLog& log, const nlohmann::json& record, const MeasuredOn& on,
                         RunStatistic statistic) {
  const char* field = run_statistic_field(statistic);
  double best = 0;
  for (const auto* r : passes_of(log, record)) {
    const double ns = r->value(field, 0.0);
    if (!r->value("ok", false) || ns <= 0 || !on.matches(*r)) continue;
    best = best <= 0 ? ns : std::min(best, ns);
  }
  return best;
}

bool failed_check(const nlohmann::json& record) {
  if (record.value("ok", false)) return false;
  const std::string error = record.value("error", "");
  return error.rfind("crashed", 0) == 0 || error.find("wrong output") != std::string::npos ||
         error.find(kReadsOutsideInputs) != std::string::npos;
}

bool any_pass_failed_check(const ResultLog& log, const nlohmann::json& record) {
  const auto passes = passes_of(log, record);
  return std::any_of(passes.begin(), passes.end(), [](const auto* r) { return failed_check(*r); });
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

Measured measured_configs(const ResultLog& log, const std::vector<size_t>& positions,
                          const ProgramInfo& p, const MeasuredOn& on, RunStatistic statistic,
                          const std::vector<std::string>& pooled_sessions) {
  Measured m;
  const std::string default_key = schedule_key(default_schedule(p));
  // The kept schedules' first records and own runtimes, then each pooled session's runtimes.
  std::vector<const nlohmann::json*> kept;
  std::vector<double> own;
  std::vector<std::vector<double>> later(pooled_sessions.size());
  for (size_t i : positions) {
    const auto& rec = log.records()[i];
    const std::string key = rec.at("key").get<std::string>();
    bool unsound = any_pass_failed_check(log, rec);
    std::vector<double> in_sessions;
    for (const std::string& session : pooled_sessions) {
      const nlohmann::json* again = log.find(session_key(session, key));
      unsound = unsound || (again != nullptr && any_pass_failed_check(log, *again));
      in_sessions.push_back(again == nullptr ? 0 : runtime_of_passes(log, *again, on, statistic));
    }
    if (unsound) {
      ++m.failed_check;
      continue;
    }
    const double best = runtime_of_passes(log, rec, on, statistic);
    if (best <= 0) {
      ++m.left_out;
      continue;
    }
    kept.push_back(&rec);
    own.push_back(best);
    for (size_t s = 0; s < in_sessions.size(); ++s) later[s].push_back(in_sessions[s]);
  }
  std::vector<double> log_sum(own.size()), sides(own.size(), 1.0);
  for (size_t i = 0; i < own.size(); ++i) log_sum[i] = std::log(own[i]);
  for (const std::vector<double>& session : later) {
    std::vector<double> ratios;
    for (size_t i = 0; i < own.size(); ++i)
      if (session[i] > 0) ratios.push_back(session[i] / own[i]);
    if (ratios.empty()) continue;
    const double shift = median_of(ratios);
    for (size_t i = 0; i < own.size(); ++i) {
      if (session[i] <= 0) continue;
      log_sum[i] += std::log(session[i] / shift);
      sides[i] += 1;
    }
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    Schedule s = schedule_from_json(kept[i]->at("schedule"));
    check_schedule(p, s);
    m.pooled += sides[i] > 1 ? 1 : 0;
    const auto ns =
        std::max<int64_t>(1, sides[i] > 1 ? std::llround(std::exp(log_sum[i] / sides[i]))
                                          : static_cast<int64_t>(own[i]));
    if (schedule_key(s) == default_key) m.normalizer_ns = ns;
    m.schedules.push_back(std::move(s));
    m.runtime_ns.push_back(ns);
  }
  return m;
}

namespace {

// Whether a syntax-tree file holds the trees lowering writes now of the layout graph's
// schedules, in order: the node features of today's width, the same count and the same
// encoding of every configurable stage (equal features of equal length over the same count
// imply the same width).
bool same_schedules(const AstSet& a, const Graph& layout) {
  return a.node_feat_width == kAstFeatureWidth && a.num_configs == layout.num_configs &&
         a.config_feat == layout.config_feat;
}

}  // namespace

AstSet ast_set(const Program& program, const std::vector<Schedule>& schedules,
               const Graph& layout) {
  std::vector<AstTree> lowered;
  for (const Schedule& s : schedules) lowered.push_back(lower_ast(program, s));
  std::vector<const AstTree*> trees;
  for (const AstTree& t : lowered) trees.push_back(&t);
  return ast_set(program.info(), trees, layout);
}

AstSet ast_set(const ProgramInfo& p, const std::vector<const AstTree*>& trees,
               const Graph& layout) {
  TCOST_CHECK(layout.num_configs == static_cast<int64_t>(trees.size()),
              "{}: {} trees, a layout graph of {} configurations", p.instance, trees.size(),
              layout.num_configs);
  AstSet a;
  a.name = p.instance;
  a.num_configs = static_cast<int64_t>(trees.size());
  a.node_offsets.push_back(0);
  a.edge_offsets.push_back(0);
  a.config_feat_width = static_cast<int>(layout.num_config_nodes()) * kStageConfigWidth;
  a.config_feat = layout.config_feat;
  for (const AstTree* tree : trees) {
    const AstTree& t = *tree;
    a.kinds.insert(a.kinds.end(), t.kinds.begin(), t.kinds.end());
    a.feats.insert(a.feats.end(), t.feats.begin(), t.feats.end());
    a.edges.insert(a.edges.end(), t.edges.begin(), t.edges.end());
    a.node_offsets.push_back(a.num_nodes());
    a.edge_offsets.push_back(a.num_edges());
  }
  a.runtime_ns = layout.runtime_ns;
  a.lowering = kAstLowering;
  return a;
}

void write_datasets(const std::string& out, const InstanceName& in, const Program& program,
                    const Measured& m, bool with_ast, CollectSummary& summary) {
  const ProgramInfo& p = program.info();
  const fs::path split = split_name(in.split);
  const auto path = [&](const char* collection) {
    const fs::path dir = fs::path(out) / collection / split;
    fs::create_directories(dir);
    return (dir / (p.instance + ".npz")).string();
  };
  const Graph layout = layout_graph(p, m.schedules, m.runtime_ns);
  save_graph(path("layout"), layout, true);
  ++summary.layout_written;
  if (p.single_kernel) {
    save_graph(path("tile"), tile_graph(p, m.schedules, m.runtime_ns, m.normalizer_ns), true);
    ++summary.tile_written;
  }
  if (!with_ast) return;
  const std::string ast_path = path("ast");
  // Lowering every configuration takes a while (36-70 ms each). A file whose configurations
  // are the same schedules in the same order (equal stage encodings), lowered by this version
  // of lower_ast, keeps its syntax trees, and only its runtimes are brought up to date (a
  // re-measurement). Anything else is lowered again.
  if (fs::exists(ast_path)) {
    try {
      AstSet old = load_ast(ast_path);
      if (old.lowering == kAstLowering && same_schedules(old, layout)) {
        if (old.runtime_ns != m.runtime_ns) {
          old.runtime_ns = m.runtime_ns;
          save_ast(ast_path, old, true);
        }
        ++summary.ast_written;
        return;
      }
    } catch (const InputError&) {
      // rewritten below
    }
  }
  const AstSet a = ast_set(program, m.schedules, layout);
  save_ast(ast_path, a, true);
  ++summary.ast_written;
}

}  // namespace tcost::halide
