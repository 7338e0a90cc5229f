#include "core/dataset.h"

#include <algorithm>
#include <filesystem>
#include "core/error.h"

namespace fs = std::filesystem;

namespace tcost {

const char* split_name(Split s) {
  switch (s) {
    case Split::kTrain:
      return "train";
    case Split::kValid:
      return "valid";
    case Split::kTest:
      return "test";
  }
  return "?";
}

Split parse_split(const std::string& name) {
  if (name == "train") return Split::kTrain;
  if (name == "valid") return Split::kValid;
  if (name == "test") return Split::kTest;
  throw UsageError(fmt::format("unknown split '{}': expected train, valid or test", name));
}

std::vector<std::string> list_npz_files(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return {path};
  if (!fs::is_directory(path, ec)) {
    throw InputError(fmt::format("{}: no such file or directory", path));
  }
  std::vector<std::string> out;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec),
       end;
       it != end; it.increment(ec)) {
    if (ec) throw InputError(fmt::format("{}: cannot list: {}", path, ec.message()));
    if (it->is_regular_file() && it->path().extension() == ".npz")
      out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

Dataset::Dataset(std::string root, DatasetOptions options)
    : root_(std::move(root)), options_(options) {
  std::error_code ec;
  if (!fs::is_directory(root_, ec)) {
    throw InputError(
        fmt::format("{}: not a dataset directory (expected {}/train, valid, test)", root_, root_));
  }
  size_t total = 0;
  for (Split s : {Split::kTrain, Split::kValid, Split::kTest}) {
    const fs::path dir = fs::path(root_) / split_name(s);
    if (fs::is_directory(dir, ec)) files_[static_cast<int>(s)] = list_npz_files(dir.string());
    total += files_[static_cast<int>(s)].size();
  }
  if (total == 0) {
    throw InputError(fmt::format("{}: no .npz files under train/, valid/ or test/", root_));
  }
}

uint64_t name_seed(uint64_t seed, const std::string& name) {
  uint64_t h = seed ^ 1469598103934665603ull;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

Graph Dataset::load(const std::string& file, int64_t* merged) const {
  Graph g = load_graph(file, options_.load);
  const int64_t m = options_.merge_duplicates ? merge_duplicate_configs(g) : 0;
  if (merged != nullptr) *merged = m;
  if (options_.max_configs_per_graph > 0) {
    // A per-file seed, so that each graph draws its own sample whatever the iteration order.
    g = subsample_configs(g, options_.max_configs_per_graph, name_seed(options_.seed, g.name));
  }
  return g;
}

void Dataset::for_each(Split s, const std::function<void(const Graph&)>& fn) const {
  for (const auto& f : files(s)) fn(load(f));
}

}  // namespace tcost
