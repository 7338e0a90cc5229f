// tcost bench (models): inference throughput and training step time of each neural model,
// with achieved GFLOP/s printed next to float matmul GFLOP/s measured in the same run.
#include <sys/resource.h>

#include <chrono>

#include <fmt/format.h>

#include "core/synth.h"
#include "model/models.h"
#include "train/api.h"
#include "train/chunking.h"
#include "train/losses.h"

namespace tcost::train {
namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double best_seconds(int repeats, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

double matmul_gflops(int64_t m, int64_t k, int64_t n, int repeats) {
  torch::NoGradGuard no_grad;
  const auto a = torch::randn({m, k}), b = torch::randn({k, n});
  torch::Tensor c;
  c = torch::mm(a, b);  // warm-up
  const double t = best_seconds(repeats, [&] { c = torch::mm(a, b); });
  return 2.0 * static_cast<double>(m * k * n) / t / 1e9;
}

}  // namespace

void bench_models(const BenchModelOptions& o) {
  if (o.threads > 0) torch::set_num_threads(o.threads);
  torch::manual_seed(o.seed);
  const double peak = matmul_gflops(2048, 2048, 2048, o.repeats);
  fmt::print(
      "matmul 2048x2048x2048 float32: {:.1f} GFLOP/s (LibTorch intra-op threads {}; BLAS uses its "
      "own pool)\n",
      peak, torch::get_num_threads());
  SynthOptions so;
  so.configs = o.configs;
  so.seed = o.seed;
  // Sized so that tgraph's 1-hop pruning leaves about `pruned_nodes` nodes.
  so.min_nodes = so.max_nodes = o.pruned_nodes * 5 / 4;
  const Graph g = make_synth_graph(so, 0);
  const model::Normalizer norm = model::Normalizer::fit(std::vector<Graph>{g});
  for (const auto& name : model::model_names()) {
    model::ModelOptions mo;
    mo.name = name;
    auto m = model::make_model(mo, {g.collection, g.node_feat_width, g.config_feat_width}, norm);
    const auto p = model::prepare_graph(g, norm, m->prune_hops());
    const int64_t hidden = mo.resolved().hidden;
    // Inference: every configuration, in chunks, as evaluation runs them.
    const int64_t chunk = configs_per_pass(o.chunk, p.input.num_nodes, hidden, kInferenceBudget);
    double seconds = 0;
    {
      torch::NoGradGuard no_grad;
      m->eval();
      auto run = [&] {
        for (int64_t s = 0; s < p.num_configs(); s += chunk) {
          m->forward(p.input,
                     p.configs.narrow(0, s, std::min<int64_t>(chunk, p.num_configs() - s)));
        }
      };
      run();  // warm-up
      seconds = best_seconds(o.repeats, run);
    }
    const double flops = 2.0 * m->flops_per_config(p.input) * static_cast<double>(p.num_configs());
    const double gflops = flops / seconds / 1e9;
    const double layer_peak = matmul_gflops(chunk * p.input.num_nodes, hidden, hidden, o.repeats);
    // Training: one step of 32 configurations.
    m->train();
    torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-3));
    const auto idx = torch::arange(std::min<int64_t>(32, p.num_configs()));
    const auto batch = model::select_configs(p, idx);
    auto step = [&] {
      opt.zero_grad();
      hinge_loss(m->forward(batch.input, batch.configs), batch.targets, 1.0).backward();
      opt.step();
    };
    step();
    const double step_s = best_seconds(o.repeats, step);
    fmt::print(
        "{:<13} nodes {:>4}  inference {:>9.0f} configs/s  {:6.1f} GFLOP/s = {:4.0f}% of matmul "
        "({:.0f}% of a {}x{}x{} matmul at {:.1f})  train step (K=32) {:.1f} ms\n",
        name, p.input.num_nodes, static_cast<double>(p.num_configs()) / seconds, gflops,
        100.0 * gflops / peak, 100.0 * gflops / layer_peak, chunk * p.input.num_nodes, hidden,
        hidden, layer_peak, step_s * 1e3);
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print("peak RSS {:.0f} MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
}

}  // namespace tcost::train
