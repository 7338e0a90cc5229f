// Reading and writing graphs in the TpuGraphs .npz schema.
//   load_graph - reads one file, tells the collection from its keys, converts accepted dtypes and
//                validates everything (keys, dtypes, ranks, sizes, index ranges, runtimes,
//                duplicate node_config_ids) before returning. Errors name file, key, expected
//                and found.
//   save_graph - writes the exact schema (float32 features, int32 indices, int64 runtimes).
#pragma once

#include <string>

#include "core/graph.h"
#include "core/npz.h"

namespace tcost {

struct LoadOptions {
  NpzReadOptions npz;
};

Graph load_graph(const std::string& path, const LoadOptions& options = {});
// The same validation over any archive, also one of arrays in memory (NpzFile's second form).
Graph read_graph(const NpzFile& npz);
// Reads only what tells the collection and sizes; cheaper than load_graph for listings.
Collection peek_collection(const std::string& path);

void save_graph(const std::string& path, const Graph& g, bool compress = true);

}  // namespace tcost
