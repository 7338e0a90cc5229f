// The schedule space of a program (program_info.h). Nothing here includes Halide: a schedule is
// plain data, so that sampling, encoding and featurisation are testable and cheap.
//   StageSchedule  - the decisions for one stage: compute location, tiles, loop order, storage
//                    order, vectorisation, parallelism, unrolling.
//   sample_schedules - the default schedule, then seeded samples, valid by construction.
//   encode_stage / encode_tile - the fixed-width encodings of docs/formats.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "halide/program_info.h"

namespace tcost::halide {

enum Compute : int { kInline = 0, kRoot = 1, kAtTile = 2 };

struct StageSchedule {
  int compute = kRoot;         // the output is always at root
  int tile_x = 0, tile_y = 0;  // tile of the two innermost dims (0: not tiled)
  int vector = 1;              // vector width of the innermost loop (1: scalar)
  bool parallel = false;       // the outermost loop across threads
  int unroll = 1;              // unroll factor of the second-innermost loop
  int order = 0;               // 1: the outer loops (all but the innermost two) reversed
  int reduce_outer = 0;        // 1: reduction loops outside the inner tile (stages with updates)
  int storage = 0;             // 0: natural, 1: two innermost dims swapped, 2: outermost innermost
  bool operator==(const StageSchedule& o) const;
};

// One StageSchedule per stage, aligned with ProgramInfo::stages().
using Schedule = std::vector<StageSchedule>;

// The normaliser: every stage at root, serial, scalar, untiled, in natural order.
Schedule default_schedule(const ProgramInfo& p);
// `count` distinct samples after the default (fewer when the space is smaller). Samples are
// valid by construction: a stage is computed at the output's tile only when every stage that
// reads it (looking through inlined ones) is too, or is the output; the output's tiles and
// vectors never exceed its extents. Each sample draws a bias p in [0, 1] and takes the usually
// fast choice of each decision with probability p, so the data covers fast and slow regions.
std::vector<Schedule> sample_schedules(const ProgramInfo& p, int count, uint64_t seed);
// Throws InputError when a schedule does not fit the program (wrong stage count, a value out
// of range, an invalid compute location). Schedules read back from a log are checked with it.
void check_schedule(const ProgramInfo& p, const Schedule& s);

// Compact text form, used in measurement keys: "r.32x16.v8.p.u2.o0.ro0.s0|i|..." per stage.
std::string schedule_key(const Schedule& s);
nlohmann::json schedule_to_json(const Schedule& s);
Schedule schedule_from_json(const nlohmann::json& j);  // InputError on a malformed value

// Storage order of a stage as a minor-to-major permutation of its dims (TpuGraphs layout form).
std::vector<int> storage_minor_to_major(int storage, int ndims);

// Per-stage encoding for layout-style graphs: kStageConfigWidth small categorical values in
// [-1, 5] (docs/formats.md): slots 0..5 the storage order as minor-to-major dims (-1 padded,
// the meaning TpuGraphs gives its output-layout slots), 6 tile x, 7 tile y, 8 compute, 9 vector,
// 10 parallel, 11 unroll, 12 order, 13 reduction placement, 14..17 -1.
constexpr int kStageConfigWidth = 18;
void encode_stage(const NodeInfo& node, const StageSchedule& s, float* out);
// Graph-level encoding for tile-style files (24 wide, docs/formats.md): the output stage's
// tile bounds per dim (extent when untiled), their sum and product; its vector width, parallel,
// unroll, order, reduction placement and storage, their sum and product; the compute location
// of up to six other stages (-1 padded), their sum and product.
void encode_tile(const ProgramInfo& p, const Schedule& s, float* out);

}  // namespace tcost::halide
