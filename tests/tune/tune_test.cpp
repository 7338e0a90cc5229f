// The tuner's two stages, with stand-in models: a layout model ranks every candidate, a model
// that reads syntax trees ranks the best of them again beside it, the round measures the
// favourites of the two together, and both are refit on what it measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <numeric>
#include <set>

#include "core/error.h"
#include "halide/datasets.h"
#include "halide/featurize.h"
#include "halide/measure_batch.h"
#include "halide/result_log.h"
#include "halide/zoo.h"
#include "train/cost_model.h"
#include "tune/tuner.h"

namespace tcost {
namespace {

namespace fs = std::filesystem;

// Ranks candidates in the order they come; counts its refits.
class PoolOrderModel final : public train::CostModel {
 public:
  std::string name() const override { return "pool-order"; }
  Collection collection() const override { return Collection::kLayout; }
  std::vector<double> score(const Graph& g) override {
    std::vector<double> c;
    for (int64_t i = 0; i < g.num_configs; ++i) c.push_back(static_cast<double>(i));
    return c;
  }
  std::vector<double> score(const AstSet&) override { throw InputError("graphs only"); }
  void refit(const std::vector<train::Views>& v, const train::RefitOptions&) override {
    ASSERT_EQ(v.size(), 1u);
    ASSERT_NE(v[0].graph, nullptr);
    refit_runtimes = v[0].graph->runtime_ns;
    ++refits;
  }
  void save(const std::string&) const override {}
  int refits = 0;
  std::vector<int64_t> refit_runtimes;  // of the last refit's graph
};

// Prefers the largest syntax trees; remembers what it was asked to rank.
class LargestTreeModel final : public train::CostModel {
 public:
  std::string name() const override { return "largest-tree"; }
  Collection collection() const override { return Collection::kAst; }
  std::vector<double> score(const Graph&) override { throw InputError("trees only"); }
  std::vector<double> score(const AstSet& s) override {
    std::vector<double> c;
    for (int64_t i = 0; i < s.num_configs; ++i)
      c.push_back(-static_cast<double>(s.node_offsets[i + 1] - s.node_offsets[i]));
    seen.push_back({s, c});
    return c;
  }
  void refit(const std::vector<train::Views>& v, const train::RefitOptions&) override {
    ASSERT_EQ(v.size(), 1u);
    ASSERT_NE(v[0].ast, nullptr);
    refit_trees = *v[0].ast;
    ++refits;
  }
  void save(const std::string&) const override {}
  std::vector<std::pair<AstSet, std::vector<double>>> seen;
  int refits = 0;
  AstSet refit_trees;  // of the last refit
};

// Mean 0, standard deviation 1.
std::vector<double> zscores(const std::vector<double>& c) {
  double mean = 0, var = 0;
  for (double x : c) mean += x / static_cast<double>(c.size());
  for (double x : c) var += (x - mean) * (x - mean) / static_cast<double>(c.size());
  std::vector<double> z;
  for (double x : c) z.push_back((x - mean) / std::sqrt(var));
  return z;
}

// The stage encoding (configuration features) of configuration i.
std::vector<float> row(const std::vector<float>& feat, int width, size_t i) {
  return {feat.begin() + static_cast<long>(i) * width,
          feat.begin() + static_cast<long>(i + 1) * width};
}

// Short measurements on one thread, no time budget, quiet; the log in `dir`.
tune::TuneOptions quick_options(const fs::path& dir) {
  tune::TuneOptions o;
  o.time_budget_min = 0;
  o.threads = 1;
  o.workers = 1;
  o.max_run_seconds = 0.05;
  o.quiet = true;
  o.log = (dir / "tune.jsonl").string();
  return o;
}

TEST(TwoStageTuning, TheTreeModelReRanksTheLayoutModelsBest) {
  const fs::path dir = fs::temp_directory_path() / "tcost_tune_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const halide::Program p = halide::zoo_program("matmul_192");
  tune::TuneOptions o = quick_options(dir);
  o.budget = 5;  // the default schedule and one round of four
  o.per_round = 4;
  o.explore = 0;
  o.candidates = 64;
  o.rerank = 12;
  PoolOrderModel layout;
  LargestTreeModel trees;

  // The models must fit: a tree model needs a layout model first, a layout model needs none.
  EXPECT_THROW(tune::tune(p, &trees, o), InputError);
  EXPECT_THROW(tune::tune(p, &trees, o, &trees), InputError);
  EXPECT_THROW(tune::tune(p, &layout, o, &layout), UsageError);
  EXPECT_THROW(tune::tune(p, nullptr, o, &layout), UsageError);

  const tune::TuneResult r = tune::tune(p, &trees, o, &layout);
  EXPECT_EQ(r.measured, 5);
  EXPECT_GT(r.best_ns, 0);
  ASSERT_EQ(trees.seen.size(), 1u);  // one round
  const auto& [set, cost] = trees.seen.front();
  ASSERT_EQ(set.num_configs, 12);  // the layout model's best 12, lowered
  // Both models are refit on the round's measurements and the default's, the tree model on
  // them lowered to syntax trees, with the same runtimes.
  EXPECT_EQ(layout.refits, 1);
  EXPECT_EQ(trees.refits, 1);
  EXPECT_EQ(layout.refit_runtimes.size(), 5u);
  EXPECT_EQ(trees.refit_trees.num_configs, 5);
  EXPECT_EQ(trees.refit_trees.runtime_ns, layout.refit_runtimes);
  EXPECT_TRUE(std::all_of(layout.refit_runtimes.begin(), layout.refit_runtimes.end(),
                          [](int64_t ns) { return ns > 0; }));

  // The round measured the four best among them by both models' standardised costs averaged
  // (the layout model's costs of its best 12 are 0..11).
  std::vector<double> layout_cost(12);
  std::iota(layout_cost.begin(), layout_cost.end(), 0.0);
  const std::vector<double> zt = zscores(cost), zl = zscores(layout_cost);
  std::vector<size_t> ids(12);
  std::iota(ids.begin(), ids.end(), 0);
  std::stable_sort(ids.begin(), ids.end(),
                   [&](size_t a, size_t b) { return zt[a] + zl[a] < zt[b] + zl[b]; });
  std::set<std::vector<float>> expected;
  for (size_t k = 0; k < 4; ++k)
    expected.insert(row(set.config_feat, set.config_feat_width, ids[k]));
  std::vector<halide::Schedule> measured;
  const halide::Schedule def = halide::default_schedule(p.info());
  const halide::ResultLog log(o.log);
  for (const auto& rec : log.records()) {
    halide::Schedule s = halide::schedule_from_json(rec.at("schedule"));
    if (rec.value("pass", 1) == 1 && !(s == def)) measured.push_back(std::move(s));
  }
  ASSERT_EQ(measured.size(), 4u);
  const Graph g = halide::layout_graph(p.info(), measured, {});
  std::set<std::vector<float>> got;
  for (size_t i = 0; i < 4; ++i)
    got.insert(row(g.config_feat, static_cast<int>(g.config_feat.size() / 4), i));
  EXPECT_EQ(got, expected);
  // The syntax-tree model was refit on the trees of the five measured schedules (the tuner's
  // order: by measurement key), as lowering them afresh gives them.
  {
    std::map<std::string, halide::Schedule> by_key;
    for (const halide::Schedule& s : measured) by_key.emplace(halide::measurement_key(p, s), s);
    by_key.emplace(halide::measurement_key(p, def), def);
    std::vector<halide::Schedule> all;
    for (const auto& [key, s] : by_key) all.push_back(s);
    const AstSet fresh = halide::ast_set(p, all, halide::layout_graph(p.info(), all, {}));
    EXPECT_EQ(trees.refit_trees.kinds, fresh.kinds);
    EXPECT_EQ(trees.refit_trees.feats, fresh.feats);
    EXPECT_EQ(trees.refit_trees.edges, fresh.edges);
    EXPECT_EQ(trees.refit_trees.node_offsets, fresh.node_offsets);
    EXPECT_EQ(trees.refit_trees.config_feat, fresh.config_feat);
  }
  // ... which are not the layout model's four favourites alone (else this would show nothing).
  std::set<std::vector<float>> first;
  for (size_t k = 0; k < 4; ++k) first.insert(row(set.config_feat, set.config_feat_width, k));
  EXPECT_NE(first, expected);
  // ... nor the tree model's alone.
  std::vector<size_t> by_tree(12);
  std::iota(by_tree.begin(), by_tree.end(), 0);
  std::stable_sort(by_tree.begin(), by_tree.end(),
                   [&](size_t a, size_t b) { return cost[a] < cost[b]; });
  std::set<std::vector<float>> tree_alone;
  for (size_t k = 0; k < 4; ++k)
    tree_alone.insert(row(set.config_feat, set.config_feat_width, by_tree[k]));
  EXPECT_NE(tree_alone, expected);
  fs::remove_all(dir);
}

// The tuner returns only a schedule that passes its verification: outputs checked against the
// default's and compiled with Halide's bounds asserts. A log claims a gaussian blur schedule
// (found in the shipped data, docs/tune.md) is by far the fastest and was checked: its
// verification finds it reading the input outside its buffer (ShiftInwards tails of an unroll
// over three channels by four start at channel -1; reads_outside_inputs sees it in the lowered
// loops, before any compile) and the next best is returned instead, as
// best_on_record says too.
TEST(Verification, AScheduleThatReadsOutsideAnInputIsRefused) {
  const fs::path dir = fs::temp_directory_path() / "tcost_verify_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const halide::Program p = halide::zoo_program("gaussian_blur_768x512");
  const halide::Schedule outside = halide::schedule_from_json(nlohmann::json::parse(
      "[[1,64,8,16,1,2,1,0,0,-1,0,0,0,0,0,0,4,0],[1,16,8,16,1,4,1,0,0,-1,0,0,0,2,2,0,2,0]]"));
  halide::check_schedule(p.info(), outside);  // in the space
  const halide::Schedule def = halide::default_schedule(p.info());
  tune::TuneOptions o = quick_options(dir);
  o.budget = 2;  // what the log holds: nothing more is measured
  {
    halide::ResultLog log(o.log);
    for (const auto& [s, ns] : {std::make_pair(outside, 1.0), std::make_pair(def, 5e9)}) {
      log.append({{"key", halide::measurement_key(p, s)},
                  {"pass", 1},
                  {"instance", p.name()},
                  {"schedule", halide::schedule_to_json(s)},
                  {"ok", true},
                  {"checked", true},
                  {"best_ns", ns}});
    }
  }
  ASSERT_EQ(tune::best_on_record(p, o.log)->first, outside);  // not verified yet: believed
  PoolOrderModel model;
  const tune::TuneResult r = tune::tune(p, &model, o);
  EXPECT_EQ(r.measured, 0);
  EXPECT_EQ(r.best, def);
  const halide::ResultLog log(o.log);
  const nlohmann::json* refused = log.find("verify-bounds|" + halide::measurement_key(p, outside));
  ASSERT_NE(refused, nullptr);
  EXPECT_FALSE(refused->value("ok", true));
  EXPECT_TRUE(refused->value("bounds_checked", false));
  EXPECT_EQ(refused->value("pass", 0), 3);
  // Refused before it compiles: lowering with the bounds checks on found the read.
  EXPECT_NE(refused->value("error", "")
                .find(std::string(halide::kReadsOutsideInputs) +
                      ": image is read over [-1, 2] in dimension 2"),
            std::string::npos)
      << refused->value("error", "");
  const nlohmann::json* passed = log.find("verify-bounds|" + halide::measurement_key(p, def));
  ASSERT_NE(passed, nullptr);
  EXPECT_TRUE(passed->value("ok", false)) << passed->value("error", "");
  EXPECT_TRUE(passed->value("checked", false));
  EXPECT_TRUE(passed->value("bounds_checked", false));
  // The refusal is remembered: the log's best is the verified one, and a rerun measures nothing.
  EXPECT_EQ(tune::best_on_record(p, o.log)->first, def);
  const size_t records = log.records().size();
  const tune::TuneResult again = tune::tune(p, &model, o);
  EXPECT_EQ(again.best, def);
  EXPECT_EQ(halide::ResultLog(o.log).records().size(), records);
  fs::remove_all(dir);
}

// With finalists, the fastest few schedules on record are each measured once more (or their
// re-measurement is read from the log), and the one whose slower measurement is fastest is
// chosen and verified; the single fastest run's schedule is reported beside it. A log claims D
// ran in 0.5 ns, A in 1 ns but 10 ns when measured again, B in 2 ns and 3 ns again: D is
// measured now (real nanoseconds, far more than 3), so B, whose slower run is the fastest, wins.
TEST(Finalists, TheSlowerOfTwoMeasurementsChooses) {
  const fs::path dir = fs::temp_directory_path() / "tcost_finalists_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const halide::Program p = halide::zoo_program("gaussian_blur_768x512");
  const auto samples = halide::sample_schedules(p.info(), 4, 11);
  ASSERT_GE(samples.size(), 4u);  // [0] is the default
  const halide::Schedule &d = samples[1], &a = samples[2], &b = samples[3];
  const halide::Schedule def = halide::default_schedule(p.info());
  tune::TuneOptions o = quick_options(dir);
  o.budget = 4;  // what the log holds: nothing more is searched
  o.finalists = 3;
  {
    halide::ResultLog log(o.log);
    const auto record = [&](const std::string& key, int pass, const halide::Schedule& s,
                            double ns) {
      log.append({{"key", key},
                  {"pass", pass},
                  {"instance", p.name()},
                  {"schedule", halide::schedule_to_json(s)},
                  {"ok", true},
                  {"checked", true},
                  {"best_ns", ns}});
    };
    record(halide::measurement_key(p, def), 1, def, 5e9);
    record(halide::measurement_key(p, d), 1, d, 0.5);
    record(halide::measurement_key(p, a), 1, a, 1.0);
    record(halide::measurement_key(p, b), 1, b, 2.0);
    record("final|" + halide::measurement_key(p, a), 2, a, 10.0);
    record("final|" + halide::measurement_key(p, b), 2, b, 3.0);
  }
  PoolOrderModel model;
  const tune::TuneResult r = tune::tune(p, &model, o);
  EXPECT_EQ(r.measured, 0);
  EXPECT_EQ(r.finalists_measured, 1);  // D; A's and B's are on record
  EXPECT_EQ(r.fastest_run, d);
  EXPECT_EQ(r.fastest_run_ns, 0.5);
  EXPECT_EQ(r.best, b);
  EXPECT_EQ(r.best_ns, 2.0);  // its fastest measurement
  const halide::ResultLog log(o.log);
  const nlohmann::json* again = log.find("final|" + halide::measurement_key(p, d));
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(again->value("ok", false)) << again->value("error", "");
  EXPECT_TRUE(again->value("checked", false));
  EXPECT_EQ(again->value("pass", 0), 2);
  EXPECT_GT(again->value("best_ns", 0.0), 3.0);
  const nlohmann::json* verified = log.find("verify-bounds|" + halide::measurement_key(p, b));
  ASSERT_NE(verified, nullptr);
  EXPECT_TRUE(verified->value("ok", false)) << verified->value("error", "");
  // The plugin's shortcut reads the same choice from the log.
  const auto on_record = tune::best_on_record(p, o.log);
  ASSERT_TRUE(on_record.has_value());
  EXPECT_EQ(on_record->first, b);
  EXPECT_EQ(on_record->second, 2.0);
  // One finalist: the fastest run, as before.
  o.finalists = 1;
  o.log = (dir / "one.jsonl").string();
  fs::copy_file(dir / "tune.jsonl", o.log);
  const tune::TuneResult one = tune::tune(p, &model, o);
  EXPECT_EQ(one.best, d);
  EXPECT_EQ(one.finalists_measured, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tcost
