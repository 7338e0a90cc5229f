// The schedule space of a program (program_info.h). Nothing here includes Halide: a schedule is
// plain data, so that sampling, encoding and featurisation are testable and cheap.
//   StageSchedule  - the decisions for one stage: compute location, tiles, loop order, storage
//                    order, vectorisation, parallelism, unrolling.
//   sample_schedules - the default schedule, then seeded samples, valid by construction.
//   encode_stage / encode_tile - the fixed-width encodings of docs/formats.md.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "halide/program_info.h"

namespace tcost::halide {

enum Compute : int { kInline = 0, kRoot = 1, kAtTile = 2 };

// The decisions for one stage. Every field's default is the default schedule's choice, and a
// schedule of the first version of this space (the first nine fields) reads back unchanged.
struct StageSchedule {
  int compute = kRoot;         // kInline, kRoot or kAtTile (outputs are always at root)
  int tile_x = 0, tile_y = 0;  // inner tile of the two innermost dims (0: not tiled)
  int vector = 1;              // vector width (1: scalar), of dimension vector_dim
  int parallel = 0;            // 1: the outermost loop across threads; 2: the two outermost fused
  int unroll = 1;              // unroll factor of the loop just outside the vector loop
  int order = 0;               // 1: the outer loops (all but the innermost two) reversed
  // Where the reduction loops go (stages with updates): 0 innermost, 1 just outside the inner
  // tile, 2 outside every pure loop (an accumulator tile kept in registers).
  int reduce_outer = 0;
  int storage = 0;  // 0: natural, 1: two innermost dims swapped, 2: outermost innermost
  // kAtTile: the stage (index into stages()) at whose tile loop this one is computed; -1: the
  // main output (ProgramInfo::output()).
  int at = -1;
  int at_outer = 0;    // kAtTile: 1 at the consumer's outer tile loop (two-level tiling)
  int store_root = 0;  // kAtTile: 1 stores at root (sliding windows over the consumer's loop)
  int tile_c = 0;      // split of the third dimension (0: none)
  int outer_x = 0, outer_y = 0;  // second tiling level: inner tiles per outer tile (0: none)
  int vector_dim = 0;            // the dimension vectorised: 0 x, 1 y, 2 the third
  int unroll2 = 1;  // unroll factor of the loop outside the `unroll` one (register blocking)
  int rfactor = 0;  // reductions at root: partial results computed in parallel (0: none)
  bool operator==(const StageSchedule& o) const;
};

// One StageSchedule per stage, aligned with ProgramInfo::stages().
using Schedule = std::vector<StageSchedule>;

// The pure loops of a stage's definitions under its schedule, innermost first, before the
// vector and unroll splits: dimension d of the stage split by its inner tile (kLoopInner, the
// tile size), by the second tiling level (kLoopMiddle, tiles per outer tile) and the rest
// (kLoopOuter), or not split (kLoopWhole). Inner loops come first, then middle ones, then the
// outer and whole ones in dimension order; `order` reverses all but the two innermost; the
// vectorised dimension's innermost loop moves innermost. Extents assume the whole stage.
enum LoopKind : int { kLoopWhole = 0, kLoopInner = 1, kLoopMiddle = 2, kLoopOuter = 3 };
struct Loop {
  int dim = 0;
  int level = kLoopWhole;
  int64_t extent = 1;
};
std::vector<Loop> pure_loops(const NodeInfo& node, const StageSchedule& s);

// The normaliser: every stage at root, serial, scalar, untiled, in natural order.
Schedule default_schedule(const ProgramInfo& p);
// `count` distinct samples after the default (fewer when the space is smaller). Samples are
// valid by construction: a stage is computed at a consumer's tile only when every other stage
// that reads it (looking through inlined ones) is computed inside that consumer's loops, at the
// same tile level or inside it; outputs' tiles, vectors and unrolls never exceed their loops. Each
// sample draws a bias p in [0, 1] and takes the usually fast choice of each decision with
// probability p, so the data covers fast and slow regions.
std::vector<Schedule> sample_schedules(const ProgramInfo& p, int count, uint64_t seed);
// Up to `count` distinct structured schedules (sketches, as Ansor calls them): the rules of
// hand-written CPU schedules applied stage by stage. Pointwise stages inlined; stencils inlined
// or computed in a consumer's tile; reductions computed in a consumer's tile with the reduction
// outside the pure loops (accumulators in registers), or at root register-tiled; stages at root
// tiled as one to four vectors across x by a few rows and channels, the rows unrolled, the outer
// loops parallel. The rules fix the structure; the seed draws the factors. All valid.
std::vector<Schedule> sketch_schedules(const ProgramInfo& p, int count, uint64_t seed);
// Throws InputError when a schedule does not fit the program (wrong stage count, a value out
// of range, an invalid compute location). Schedules read back from a log are checked with it.
void check_schedule(const ProgramInfo& p, const Schedule& s);
// A neighbour of `parent`: one decision of one stage moved to the next value of its table (a
// tile halved or doubled, a vector or unroll factor stepped, a reduction placement, parallel
// mode, loop order or storage order changed, or a stage inlined or put at root), checked with
// check_schedule; nullopt when a few tries find no valid one. The local step of the tuner.
std::optional<Schedule> tweak_schedule(const ProgramInfo& p, const Schedule& parent,
                                       std::mt19937_64& rng);

// Compact text form, used in measurement keys: "r.32x16.v8.p.u2.o0.ro0.s0|i|..." per stage.
std::string schedule_key(const Schedule& s);
nlohmann::json schedule_to_json(const Schedule& s);
Schedule schedule_from_json(const nlohmann::json& j);  // InputError on a malformed value

// Storage order of a stage as a minor-to-major permutation of its dims (TpuGraphs layout form).
std::vector<int> storage_minor_to_major(int storage, int ndims);

// Per-stage encoding for layout-style graphs: kStageConfigWidth small categorical values in
// [-1, 6] (docs/formats.md): slots 0..5 the storage order as minor-to-major dims (-1 padded,
// the meaning TpuGraphs gives its output-layout slots), 6 tile x, 7 tile y, 8 compute, 9 vector,
// 10 parallel, 11 unroll, 12 order, 13 reduction placement, 14 the consumer it is computed at
// (stages away, 0 the main output), 15 at the outer tile, 16 store at root, 17 tile of the
// third dim, 18 outer tile x, 19 outer tile y, 20 vectorised dim, 21 second unroll,
// 22 rfactor, 23 -1. Slots of decisions that do not apply are -1.
constexpr int kStageConfigWidth = 24;
// `stage`: the index of the stage among ProgramInfo::stages().
void encode_stage(const NodeInfo& node, int stage, const StageSchedule& s, float* out);
// Graph-level encoding for tile-style files (24 wide, docs/formats.md): the output stage's
// tile bounds per dim (extent when untiled), their sum and product; its vector width, parallel,
// unroll, order, reduction placement and storage, their sum and product; the compute location
// of up to six other stages (-1 padded), their sum and product.
void encode_tile(const ProgramInfo& p, const Schedule& s, float* out);

}  // namespace tcost::halide
