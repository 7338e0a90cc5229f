// tcost bench: speed figures of the core, printed as times and as ratios measured in one run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <random>

#include <unistd.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/metrics.h"
#include "core/synth.h"
#include "core/tpugraphs_io.h"
#include "train/api.h"

namespace tcost::cli {
namespace {

struct BenchOptions {
  int64_t configs = 100000;  // configurations for the metric benchmark
  int repeats = 5;
  uint64_t seed = 1;
  bool models = true;  // also benchmark the neural models
  bool models_only = false;
  train::BenchModelOptions model;
};

template <typename F>
double best_seconds(int repeats, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void run_bench(const BenchOptions& o) {
  if (o.models_only) {
    train::bench_models(o.model);
    return;
  }
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> n01(0, 1);
  std::vector<double> truth(static_cast<size_t>(o.configs)), pred(truth.size());
  for (size_t i = 0; i < truth.size(); ++i) {
    truth[i] = std::exp(n01(rng));
    pred[i] = std::round((truth[i] + 0.5 * n01(rng)) * 100) / 100;  // correlated, with ties
  }
  double tau = 0;
  const double t_tau = best_seconds(o.repeats, [&] { tau = kendall_tau_b(pred, truth); });
  const double t_sort = best_seconds(o.repeats, [&] {
    std::vector<double> c = pred;
    std::sort(c.begin(), c.end());
  });
  fmt::print(
      "kendall_tau_b   c={:<8} {:9.3f} ms  (tau={:.4f}; {:.1f}x one std::sort of c doubles "
      "at {:.3f} ms)\n",
      o.configs, t_tau * 1e3, tau, t_tau / t_sort, t_sort * 1e3);
  const size_t small = std::min<size_t>(truth.size(), 5000);
  std::vector<double> ps(pred.begin(), pred.begin() + static_cast<int64_t>(small));
  std::vector<double> ts(truth.begin(), truth.begin() + static_cast<int64_t>(small));
  const double t_brute = best_seconds(1, [&] { kendall_tau_b_brute(ps, ts); });
  const double t_fast_small = best_seconds(o.repeats, [&] { kendall_tau_b(ps, ts); });
  fmt::print("kendall_tau_b   c={:<8} {:9.3f} ms  (O(c^2) reference {:.3f} ms: {:.0f}x slower)\n",
             small, t_fast_small * 1e3, t_brute * 1e3, t_brute / t_fast_small);
  double opa = 0;
  const double t_opa = best_seconds(o.repeats, [&] { opa = ordered_pair_accuracy(pred, truth); });
  fmt::print("opa             c={:<8} {:9.3f} ms  (opa={:.4f})\n", o.configs, t_opa * 1e3, opa);

  // npz round trip of a synthetic layout graph.
  SynthOptions so;
  so.configs = 2000;
  so.min_nodes = so.max_nodes = 500;
  const Graph g = make_synth_graph(so, 0);
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("tcost-bench-{}.npz", ::getpid()))
          .string();
  double bytes = 0;
  const double t_save = best_seconds(o.repeats, [&] { save_graph(path, g, true); });
  bytes = static_cast<double>(std::filesystem::file_size(path));
  const double t_load = best_seconds(o.repeats, [&] { load_graph(path); });
  std::filesystem::remove(path);
  fmt::print(
      "npz layout graph {} nodes x {} configs ({:.1f} MB deflated): save {:.1f} ms, "
      "load+validate {:.1f} ms\n",
      g.num_nodes, g.num_configs, bytes / 1e6, t_save * 1e3, t_load * 1e3);
  if (o.models) train::bench_models(o.model);
}

}  // namespace

void register_bench(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "Print speed figures (metrics, npz I/O)");
  cmd->add_option("--configs", o->configs, "Configurations for the metric benchmark")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{2}, int64_t{100000000}));
  cmd->add_option("--repeats", o->repeats, "Repetitions; the best is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", o->seed, "Random seed")->capture_default_str();
  auto* no_models = cmd->add_flag("!--no-models", o->models, "Skip the model benchmarks");
  cmd->add_option("--nodes", o->model.pruned_nodes,
                  "Nodes of the model benchmark graph (after pruning)")
      ->capture_default_str()
      ->check(CLI::Range(8, 1000000));
  cmd->add_option("--model-configs", o->model.configs, "Configurations scored per model")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--chunk", o->model.chunk, "Configurations per forward pass")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--threads", o->model.threads, "Threads (0 = all cores)");
  cmd->add_option("--export", o->model.export_dir,
                  "Write each model's graph, weights, scores and timings here "
                  "(for scripts/bench-python.py)");
  cmd->add_flag("--models-only", o->models_only, "Only the model benchmarks")->excludes(no_models);
  cmd->callback([o] {
    o->model.repeats = o->repeats;
    run_bench(*o);
  });
}

}  // namespace tcost::cli
