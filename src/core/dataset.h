// Datasets laid out as TpuGraphs ships them: <root>/{train,valid,test}/*.npz.
//   Split          - train / valid / test, with names.
//   list_npz_files - the .npz files of a file or directory (recursive, sorted).
//   Dataset        - the file lists of each split; graphs are loaded lazily, one at a time, so
//                    a dataset larger than memory can be iterated. Per-graph subsampling and
//                    duplicate merging are applied on load when asked for.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/graph.h"
#include "core/tpugraphs_io.h"

namespace tcost {

enum class Split { kTrain, kValid, kTest };
// A seed of its own for `name` (a graph, a program): FNV-1a of the name's bytes, started from
// `seed` mixed with the FNV offset basis. The same on every platform and in every order.
uint64_t name_seed(uint64_t seed, const std::string& name);
const char* split_name(Split s);
Split parse_split(const std::string& name);  // UsageError for an unknown name

std::vector<std::string> list_npz_files(const std::string& path);

struct DatasetOptions {
  // Keep at most this many configurations per graph (0 = all), drawn with `seed`.
  int64_t max_configs_per_graph = 0;
  uint64_t seed = 0;
  // Merge configurations with identical features, keeping the minimum runtime.
  bool merge_duplicates = false;
  LoadOptions load;
};

class Dataset {
 public:
  // root must hold at least one of train/, valid/, test/ with .npz files.
  explicit Dataset(std::string root, DatasetOptions options = {});

  const std::string& root() const { return root_; }
  const std::vector<std::string>& files(Split s) const { return files_[static_cast<int>(s)]; }
  // Loads one graph, applying the options. merged (if given) receives how many configurations
  // were merged as duplicates.
  Graph load(const std::string& file, int64_t* merged = nullptr) const;
  // Calls fn for each graph of a split, loading them one at a time.
  void for_each(Split s, const std::function<void(const Graph&)>& fn) const;

 private:
  std::string root_;
  DatasetOptions options_;
  std::vector<std::string> files_[3];
};

}  // namespace tcost
