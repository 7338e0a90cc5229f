// The in-memory cost model: the interface that search and tuning see. Load a checkpoint once,
// score candidate configurations of graphs built in memory, refit on new measurements, save.
// The neural models and XGBoost sit behind it; the network itself stays hidden in
// cost_model.cpp (this header includes no LibTorch).
//   model_names      - every model tcost can train (the CLI and the tests take the list here).
//   CostModel        - score / refit / save.
//   load_cost_model  - the factory: a checkpoint file (or an ensemble file) to a CostModel.
//   make_ensemble    - cost models combined into one: standardised costs, averaged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/ast.h"
#include "core/graph.h"

namespace tcost::train {

const std::vector<std::string>& model_names();  // gcn-baseline, sage, tgraph, ast-gcn, xgb

struct RefitOptions {
  int steps = 30;             // optimiser steps (neural) or boosting rounds (xgb)
  double lr = 3e-4;           // neural: fine-tuning learning rate (AdamW)
  int configs_per_step = 32;  // neural: configurations of one graph per step
  uint64_t seed = 0;
};

// One program's configurations in the views a model may read, in the same order: the layout
// graph and the lowered syntax trees (written side by side by `tcost collect`). Either may be
// missing when the model does not read it.
struct Views {
  const Graph* graph = nullptr;
  const AstSet* ast = nullptr;
};

// InputError unless v holds the views a model reads (graph: the graph, trees: the syntax
// trees), naming the model and what is missing. The base score(Views) below and every model
// that reads both views check with it.
void require_views(const Views& v, bool graph, bool trees, const std::string& model);

class CostModel {
 public:
  virtual ~CostModel() = default;
  virtual std::string name() const = 0;       // one of model_names()
  virtual Collection collection() const = 0;  // what it reads: layout, tile or ast
  // Predicted costs of every configuration of g, higher = slower (g's runtimes are not read).
  // InputError when g does not fit the model (collection, feature widths).
  virtual std::vector<double> score(const Graph& g) = 0;
  // The same for syntax-tree sets (ast-gcn); InputError for the other models.
  virtual std::vector<double> score(const AstSet& s) = 0;
  // The same from whichever views it reads (an ensemble reads its members'); InputError naming
  // a view it needs and did not get.
  virtual std::vector<double> score(const Views& v);
  // The collections it reads: its own, or its members' for an ensemble (layout first).
  virtual std::vector<Collection> collections() const { return {collection()}; }
  // Fine-tunes in memory on measured programs (every configuration's runtime known), each given
  // in the views it reads, as score(Views) takes them: v.graph for the layout and tile models
  // and xgb, v.ast for ast-gcn, both for tgraph-ast (an ensemble gives each member its own).
  // Programs with fewer than two configurations are skipped. InputError naming a view it needs
  // and did not get, or one that does not fit.
  virtual void refit(const std::vector<Views>& measured, const RefitOptions& o) = 0;
  // A checkpoint that load_cost_model reads back (written atomically).
  virtual void save(const std::string& path) const = 0;
};

// InputError for a missing, corrupt or incompatible checkpoint. threads: LibTorch/XGBoost
// threads (0: their default).
std::unique_ptr<CostModel> load_cost_model(const std::string& checkpoint, int threads = 0);

// Costs standardised over a program's configurations: mean 0, standard deviation 1 (all zero
// when they tie). How an ensemble combines its members, and tuning its two stages.
std::vector<double> standardised(std::vector<double> cost);

// An ensemble of cost models: each member's costs for a program are standardised over its
// configurations (z-scores; a member that ties them all adds zeros), then averaged with the
// weights (positive; empty = equal). Members may read different views (layout and syntax
// trees: the ensemble then needs both, its collection() is kAst and collections() names both);
// layout and tile members do not mix. refit refits every member; save writes the ensemble file
// and its members beside it (PATH.member<i>). UsageError for no members, mixed layout and tile
// members, or weights that do not fit.
std::unique_ptr<CostModel> make_ensemble(std::vector<std::unique_ptr<CostModel>> members,
                                         std::vector<double> weights = {});

// Writes an ensemble file naming existing checkpoints (paths as given, relative ones resolved
// from the file's directory when loaded), after loading each to check it; load_cost_model reads
// it back. The file is JSON: {"format": "tcost-ensemble", "members": [{"checkpoint", "weight"}]}.
void write_ensemble(const std::string& path, const std::vector<std::string>& checkpoints,
                    const std::vector<double>& weights = {});

}  // namespace tcost::train
