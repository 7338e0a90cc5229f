// tcost bench (models): inference throughput and training step time of each neural model,
// with achieved GFLOP/s printed next to float matmul GFLOP/s measured in the same run.
#include <sys/resource.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/blas.h"
#include "core/error.h"
#include "core/npz.h"
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

// Best times of `a` and `b` over `repeats` runs each, alternating, so that both see the same
// neighbours on a shared machine.
template <typename A, typename B>
std::pair<double, double> best_alternating(int repeats, A&& a, B&& b) {
  double best_a = 1e30, best_b = 1e30;
  for (int r = 0; r < repeats; ++r) {
    best_a = std::min(best_a, best_seconds(1, a));
    best_b = std::min(best_b, best_seconds(1, b));
  }
  return {best_a, best_b};
}

// The output is allocated once: a fresh 16 MB result per call adds page faults that vary from
// run to run and made this reference swing by 2-3x.
double matmul_gflops(int64_t m, int64_t k, int64_t n, int repeats) {
  torch::NoGradGuard no_grad;
  const auto a = torch::randn({m, k}), b = torch::randn({k, n});
  auto c = torch::mm(a, b);  // warm-up
  const double t = best_seconds(repeats, [&] { torch::mm_out(c, a, b); });
  return 2.0 * static_cast<double>(m * k * n) / t / 1e9;
}

NpyArray tensor_npy(const torch::Tensor& t) {
  torch::Tensor c = t.detach().contiguous();
  NpyArray a;
  if (c.scalar_type() == torch::kFloat32) {
    a.dtype = DType::kFloat32;
  } else if (c.scalar_type() == torch::kFloat64) {
    a.dtype = DType::kFloat64;
  } else {
    c = c.to(torch::kInt64);
    a.dtype = DType::kInt64;
  }
  a.shape.assign(c.sizes().begin(), c.sizes().end());
  a.data.resize(c.numel() * c.element_size());
  if (!a.data.empty()) std::memcpy(a.data.data(), c.data_ptr(), a.data.size());
  return a;
}

// Everything a copy of the model in another framework needs to run the same benchmark and to
// check that it computes the same scores: the prepared graph, the configurations, the
// parameters and buffers by name, tcost's own scores and timings.
// Written before the training step changes the weights.
void export_model(const std::string& dir, const std::string& name, const model::Network& m,
                  const model::PreparedGraph& p, const torch::Tensor& scores) {
  std::vector<std::pair<std::string, NpyArray>> arrays;
  const std::vector<std::pair<std::string, const torch::Tensor*>> fields = {
      {"node_feat", &p.input.node_feat},
      {"opcode", &p.input.opcode},
      {"src", &p.input.src},
      {"dst", &p.input.dst},
      {"inv_deg", &p.input.inv_deg},
      {"gcn_norm", &p.input.gcn_norm},
      {"self_norm", &p.input.self_norm},
      {"config_pos", &p.input.config_pos},
      {"dims", &p.input.dims},
      {"operands", &p.input.operands},
      {"operand_config", &p.input.operand_config},
      {"node_layout", &p.input.node_layout}};
  for (const auto& [key, tensor] : fields) arrays.emplace_back("in." + key, tensor_npy(*tensor));
  arrays.emplace_back("configs", tensor_npy(p.configs));
  arrays.emplace_back("targets", tensor_npy(p.targets));
  arrays.emplace_back("scores", tensor_npy(scores));
  for (const auto& kv : m.named_parameters())
    arrays.emplace_back("p." + kv.key(), tensor_npy(kv.value()));
  for (const auto& kv : m.named_buffers())
    arrays.emplace_back("b." + kv.key(), tensor_npy(kv.value()));
  std::filesystem::create_directories(dir);
  write_npz((std::filesystem::path(dir) / (name + ".npz")).string(), arrays, false);
}

}  // namespace

void bench_models(const BenchModelOptions& o) {
  set_threads(o.threads);
  torch::manual_seed(o.seed);
  const double peak = matmul_gflops(2048, 2048, 2048, o.repeats);
  fmt::print(
      "matmul 2048x2048x2048 float32: {:.1f} GFLOP/s (LibTorch intra-op threads {}; BLAS {}; "
      "OpenBLAS kernels {})\n",
      peak, torch::get_num_threads(),
      o.threads > 0 ? fmt::format("{} threads", o.threads) : std::string("uses its own pool"),
      openblas_core().empty() ? "none" : openblas_core());
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
    // Inference: every configuration, in chunks, as evaluation runs them (attention mixes the
    // configurations of a chunk), by score and by the reference formulation under NoGradGuard.
    const int64_t chunk = configs_per_pass(o.chunk, p.input.num_nodes, hidden, kInferenceBudget);
    m->eval();
    auto run = [&](bool inference) {
      torch::NoGradGuard no_grad;
      std::vector<torch::Tensor> parts;
      for (int64_t s = 0; s < p.num_configs(); s += chunk) {
        const auto part = p.configs.narrow(0, s, std::min<int64_t>(chunk, p.num_configs() - s));
        parts.push_back(inference ? m->score(p.input, part) : m->reference_forward(p.input, part));
      }
      return parts;
    };
    const auto scores = torch::cat(run(true)), reference_scores = torch::cat(run(false));
    const double max_rel_diff = (scores - reference_scores).abs().max().item<double>() /
                                std::max(1e-12, reference_scores.abs().max().item<double>());
    const auto [seconds, reference_seconds] = best_alternating(
        o.repeats, [&] { run(true); }, [&] { run(false); });
    const double flops = 2.0 * m->flops_per_config(p.input) * static_cast<double>(p.num_configs());
    const double gflops = flops / seconds / 1e9;
    if (!o.export_dir.empty()) export_model(o.export_dir, name, *m, p, reference_scores);
    const double layer_peak = matmul_gflops(chunk * p.input.num_nodes, hidden, hidden, o.repeats);
    // Training: one step of 32 configurations, alternating with a step of the reference.
    m->train();
    torch::optim::AdamW opt(m->parameters(), torch::optim::AdamWOptions(1e-3));
    const auto idx = torch::arange(std::min<int64_t>(32, p.num_configs()));
    const auto batch = model::select_configs(p, idx);
    auto step = [&](bool reference) {
      opt.zero_grad();
      const auto cost = reference ? m->reference_forward(batch.input, batch.configs)
                                  : m->forward(batch.input, batch.configs);
      hinge_loss(cost, batch.targets, 1.0).backward();
      opt.step();
    };
    step(false);
    step(true);
    const auto [step_s, reference_step_s] = best_alternating(
        o.repeats, [&] { step(false); }, [&] { step(true); });
    fmt::print(
        "{:<13} nodes {:>4}  inference {:>9.0f} configs/s  {:6.1f} GFLOP/s = {:4.0f}% of matmul "
        "({:.0f}% of a {}x{}x{} matmul at {:.1f})  train step (K=32) {:.1f} ms\n"
        "{:<13} reference formulation: inference {:.0f} configs/s under no-grad ({:.2f}x slower, "
        "scores equal to {:.1e} relative), train step {:.1f} ms ({:.2f}x slower)\n",
        name, p.input.num_nodes, static_cast<double>(p.num_configs()) / seconds, gflops,
        100.0 * gflops / peak, 100.0 * gflops / layer_peak, chunk * p.input.num_nodes, hidden,
        hidden, layer_peak, step_s * 1e3, "",
        static_cast<double>(p.num_configs()) / reference_seconds, reference_seconds / seconds,
        max_rel_diff, reference_step_s * 1e3, reference_step_s / step_s);
    if (!o.export_dir.empty()) {
      const nlohmann::json facts = {{"model", name},
                                    {"options", nlohmann::json::parse(mo.resolved().to_json())},
                                    {"collection", collection_name(g.collection)},
                                    {"num_nodes", p.input.num_nodes},
                                    {"configs", p.num_configs()},
                                    {"chunk", chunk},
                                    {"train_configs", idx.size(0)},
                                    {"margin", 1.0},
                                    {"lr", 1e-3},
                                    {"seed", o.seed},
                                    {"intra_op_threads", torch::get_num_threads()},
                                    {"repeats", o.repeats},
                                    {"matmul_gflops", peak},
                                    {"openblas_core", openblas_core()},
                                    {"inference_s", seconds},
                                    {"reference_inference_s", reference_seconds},
                                    {"reference_train_step_s", reference_step_s},
                                    {"inference_max_rel_diff", max_rel_diff},
                                    {"train_step_s", step_s}};
      const auto path = std::filesystem::path(o.export_dir) / (name + ".json");
      std::ofstream out(path);
      out << facts.dump(2) << "\n";
      if (!out) throw InputError(fmt::format("cannot write {}", path.string()));
    }
  }
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  fmt::print("peak RSS {:.0f} MiB\n", static_cast<double>(ru.ru_maxrss) / 1024.0);
}

}  // namespace tcost::train
