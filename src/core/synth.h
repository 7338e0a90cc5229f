// Synthetic TpuGraphs-schema datasets: a test bed for models, not a substitute for real data.
// The runtime model (documented in docs/synth.md) depends on op kinds, shapes and edges, on the
// per-node configurations, on interactions between neighbouring nodes' configurations (a layout
// mismatch across an edge costs a conversion) and on multiplicative measurement noise.
//   SynthOptions       - sizes, seed, noise.
//   make_synth_graph   - one graph with its configurations and runtimes.
//   write_synth_dataset - <out>/{train,valid,test}/synth_<collection>_NNN.npz
#pragma once

#include <cstdint>
#include <string>

#include <utility>
#include <vector>

#include "core/dataset.h"
#include "core/graph.h"

namespace tcost {

struct SynthOptions {
  Collection collection = Collection::kLayout;
  int graphs = 100;   // graphs in all splits together
  int configs = 200;  // configurations per graph
  uint64_t seed = 1;
  int min_nodes = 30;  // layout graphs: nodes per graph (tile graphs are a quarter)
  int max_nodes = 120;
  double noise_sigma = 0.02;  // log-normal measurement noise
  // The op mix and cost model (docs/synth.md): standard, fusion, compute or movement.
  std::string generator = "standard";
  double valid_fraction = 0.15;
  double test_fraction = 0.15;
};

Graph make_synth_graph(const SynthOptions& options, int index);  // UsageError: unknown generator
std::vector<std::string> synth_generator_names();
// The noise and graph sizes the generator of `o` suits, for those not given explicitly.
void apply_generator_defaults(SynthOptions& o, bool noise_given, bool nodes_given);
// Returns the number of files written per split {train, valid, test}.
struct SynthSummary {
  int train = 0, valid = 0, test = 0;
};
SynthSummary write_synth_dataset(const std::string& out_dir, const SynthOptions& options);

// The split of each graph index: a seeded shuffle, test first, then valid, the rest train
// (at least one test and one valid graph when there are 3 or more). Returns (index, split)
// pairs in writing order.
std::vector<std::pair<int, Split>> synth_splits(const SynthOptions& options);
// Creates <out>/<split>/ and returns the path of file `name` in it.
std::string synth_path(const std::string& out_dir, Split split, const std::string& name);
void count_split(SynthSummary& summary, Split split);

}  // namespace tcost
