// Syntax-tree datasets: one program, c configurations, each configuration lowered to its own
// loop-nest tree (the input of the ast-gcn model, after Tomczak et al.). The .npz schema
// (documented in docs/formats.md):
//   ast_node_kind    int32   (N,)      node kind, AstKind below
//   ast_node_feat    float32 (N, F)    numeric features, AstFeature below (F = kAstFeatureWidth)
//   ast_node_offsets int64   (c + 1,)  configuration i owns nodes [off[i], off[i+1])
//   ast_edge_index   int32   (E, 2)    (parent, child), indices local to the configuration
//   ast_edge_offsets int64   (c + 1,)  configuration i owns edges [off[i], off[i+1])
//   config_runtime   int64   (c,)      runtime in ns
//   config_feat      float32 (c, W)    optional: the schedule parameters, for reference
// A file is an AST file when it has the key ast_node_kind.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/tpugraphs_io.h"

namespace tcost {

// Node kinds of loop-nest trees; the Halide collector maps Halide IR onto the same table.
enum AstKind : int32_t {
  kAstRoot = 0,           // the program
  kAstForSerial = 1,      // a serial loop
  kAstForParallel = 2,    // a loop run across threads
  kAstForVectorized = 3,  // a loop turned into vector instructions
  kAstForUnrolled = 4,    // a fully unrolled loop
  kAstStore = 5,          // a store to a buffer
  kAstLoad = 6,           // a load from a buffer
  kAstAdd = 7,            // add / subtract
  kAstMul = 8,            // multiply
  kAstAllocate = 9,       // a buffer allocation (intermediate storage)
  kAstBlock = 10,         // produce / consume / sequence
  kAstMinMax = 11,        // min / max
  kAstSelect = 12,        // select / comparison
  kAstCall = 13,          // an intrinsic or extern call (exp, sqrt, ...)
  kAstLet = 14,           // a let binding
  kAstOther = 15,         // anything else
  kAstNumKinds = 16,
};

// Numeric features of a node.
enum AstFeature : int {
  kAstLogExtent = 0,     // log2(1 + loop extent); 0 for non-loops
  kAstDepth = 1,         // depth in the tree
  kAstLogTrips = 2,      // log2(1 + product of enclosing loop extents): how often it runs
  kAstInnermost = 3,     // 1 for a loop with no loop below it
  kAstChildren = 4,      // number of children
  kAstBytes = 5,         // bytes moved per execution (loads, stores, allocations)
  kAstUnitStride = 6,    // loads/stores: 1 when contiguous along the innermost loop
  kAstLogFootprint = 7,  // allocations and loops: log2(1 + bytes touched inside)
  // Since 2026-12-02 (width 12; 8-wide trees and checkpoints are refused by their width): how
  // an access walks memory, and the width of values.
  kAstLogStride = 8,       // loads/stores: log2(1 + |elements the index moves per iteration of
                           // the innermost enclosing loop|): 0 reused across it, 1 contiguous;
                           // where the step varies along the loops (x / 2, a tail's clamp,
                           // float coordinates) its mean magnitude over sampled points (since
                           // lowering 4, 2026-12-07); -1 when it depends on loaded data
  kAstLogOuterStride = 9,  // the same for the loop around that one
  kAstLanes = 10,          // loads, stores, arithmetic: vector lanes of the value
  kAstTypeBits = 11,       // loads, stores, arithmetic: bits of one lane
  kAstFeatureWidth = 12,
};

struct AstSet {
  std::string name;
  std::string source;
  int64_t num_configs = 0;
  int node_feat_width = kAstFeatureWidth;
  std::vector<int32_t> kinds;         // N
  std::vector<float> feats;           // N x node_feat_width
  std::vector<int64_t> node_offsets;  // c + 1
  std::vector<int32_t> edges;         // E x 2, local (parent, child)
  std::vector<int64_t> edge_offsets;  // c + 1
  std::vector<int64_t> runtime_ns;    // c
  int config_feat_width = 0;
  std::vector<float> config_feat;  // c x config_feat_width (optional)
  // The version of the lowering that made the trees (key `ast_lowering`; 0 when the file has
  // none: synthetic trees, or a file written before 2026-12-02). A collection lowers its trees
  // again when this differs from the code's (halide::kAstLowering).
  int64_t lowering = 0;

  int64_t num_nodes() const { return static_cast<int64_t>(kinds.size()); }
  int64_t num_edges() const { return static_cast<int64_t>(edges.size() / 2); }
};

bool is_ast_file(const std::string& path);
AstSet load_ast(const std::string& path, const LoadOptions& options = {});
AstSet read_ast(const NpzFile& npz);  // the same validation over any archive (or arrays)
void save_ast(const std::string& path, const AstSet& s, bool compress = true);
AstSet select_ast_configs(const AstSet& s, const std::vector<int64_t>& indices);
// The first max_configs configurations of s (all of s when max_configs <= 0 or s has no more):
// how validation caps a program's syntax trees (--valid-configs).
AstSet first_ast_configs(const AstSet& s, int64_t max_configs);
// The syntax trees at trees_file of graph g's configurations (g read from graph_file; both names
// are for the messages). InputError when there is no such file, or when its configurations are
// not g's (their runtimes differ).
AstSet load_trees_of(const Graph& g, const std::string& graph_file, const std::string& trees_file);
// InputError unless trees s hold graph g's configurations in its order (the same runtimes);
// the names are for the message. load_trees_of checks files with it.
void check_trees_of(const Graph& g, const AstSet& s, const std::string& graph_name,
                    const std::string& trees_name);

}  // namespace tcost
