// tcost synth --out DIR --collection layout|tile --graphs N --configs C --seed S
#include "cli/commands.h"
#include "core/error.h"
#include "core/synth.h"
#include "core/synth_ast.h"

namespace tcost::cli {
namespace {

struct SynthCliOptions {
  std::string out;
  std::string collection = "layout";
  SynthOptions synth;
};

void run_synth(SynthCliOptions o) {
  SynthSummary s;
  if (o.collection == "layout" || o.collection == "tile") {
    o.synth.collection = o.collection == "layout" ? Collection::kLayout : Collection::kTile;
    s = write_synth_dataset(o.out, o.synth);
  } else if (o.collection == "ast") {
    s = write_synth_ast_dataset(o.out, o.synth);
  } else {
    throw UsageError(
        fmt::format("--collection: expected layout, tile or ast, found '{}'", o.collection));
  }
  fmt::print("wrote {} {} graphs x {} configs to {} (train {}, valid {}, test {})\n",
             s.train + s.valid + s.test, o.collection, o.synth.configs, o.out, s.train, s.valid,
             s.test);
}

}  // namespace

void register_synth(CLI::App& app) {
  auto o = std::make_shared<SynthCliOptions>();
  auto* cmd = app.add_subcommand("synth", "Write a synthetic dataset in the TpuGraphs schema");
  cmd->add_option("--out", o->out, "Output directory (train/, valid/, test/ inside)")->required();
  cmd->add_option("--collection", o->collection, "layout, tile or ast")->capture_default_str();
  cmd->add_option("--graphs", o->synth.graphs, "Graphs in all splits")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--configs", o->synth.configs, "Configurations per graph")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--seed", o->synth.seed, "Random seed")->capture_default_str();
  cmd->add_option("--min-nodes", o->synth.min_nodes, "Fewest nodes per layout graph")
      ->capture_default_str()
      ->check(CLI::Range(6, 1000000));
  cmd->add_option("--max-nodes", o->synth.max_nodes, "Most nodes per layout graph")
      ->capture_default_str()
      ->check(CLI::Range(6, 1000000));
  auto* noise = cmd->add_option("--noise", o->synth.noise_sigma,
                                "Log-normal measurement noise sigma (default: the generator's)")
                    ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--generator", o->synth.generator,
                  "Op mix and cost model: standard, fusion, compute or movement (docs/synth.md)")
      ->capture_default_str();
  cmd->callback([o, cmd, noise] {
    const bool nodes_given = cmd->count("--min-nodes") + cmd->count("--max-nodes") > 0;
    apply_generator_defaults(o->synth, noise->count() > 0, nodes_given);
    run_synth(*o);
  });
}

}  // namespace tcost::cli
