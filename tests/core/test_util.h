// Helpers shared by the core tests: a scratch directory per test and running numpy scripts.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/graph.h"

namespace tcost::testing {

// A fresh directory under the system temp dir, removed when the test ends.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            (std::string("tcost_") + info->test_suite_name() + "_" + info->name() + "_" +
             std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Runs tests/scripts/<script> with Debian's python3 (which has numpy); returns the exit code.
inline int run_python(const std::string& script, const std::string& args) {
  const std::string cmd =
      std::string(TCOST_PYTHON3) + " " + TCOST_TEST_SCRIPTS + "/" + script + " " + args;
  return std::system(cmd.c_str());
}

// A small valid layout graph with recognisable values.
inline Graph tiny_layout_graph(int64_t configs = 4) {
  Graph g;
  g.name = "tiny";
  g.collection = Collection::kLayout;
  g.num_nodes = 5;
  g.node_feat_width = 140;
  g.node_feat.resize(5 * 140);
  for (size_t i = 0; i < g.node_feat.size(); ++i) g.node_feat[i] = static_cast<float>(i % 7) * 0.5f;
  g.node_opcode = {63, 63, 34, 2, 97};
  g.edges = {2, 0, 2, 1, 3, 2, 4, 3};
  g.config_node_ids = {2, 4};
  g.config_feat_width = 18;
  g.num_configs = configs;
  g.config_feat.resize(static_cast<size_t>(configs * 2 * 18));
  for (size_t i = 0; i < g.config_feat.size(); ++i) {
    g.config_feat[i] = static_cast<float>(static_cast<int>(i % 5) - 1);
  }
  for (int64_t c = 0; c < configs; ++c) g.runtime_ns.push_back(1000 + 37 * ((c * 7) % configs));
  return g;
}

}  // namespace tcost::testing
