// Featurisation of Halide programs and schedules into the TpuGraphs schema (docs/formats.md,
// "Halide graphs"). Halide-free: it reads ProgramInfo and Schedule values.
//   program_graph   - a program as a graph without configurations: inputs and stages are nodes
//                     (node features at the TpuGraphs positions, operation counts in 109..120),
//                     edges consumer -> producer.
//   layout_graph    - the graph with one per-stage configuration per schedule (layout style).
//   tile_graph      - the graph with one graph-level configuration per schedule (tile style).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph.h"
#include "halide/schedule.h"

namespace tcost::halide {

// Node-feature positions that Halide graphs fill beyond TpuGraphs' own: the operation counts
// per output point by OpKind, in the slots TpuGraphs gives slice and pad attributes (which a
// Halide stage does not have).
constexpr int kOpCountsBegin = 109;  // 109 .. 109 + kNumOpKinds - 1
// The TpuGraphs element-type slot of a type name ("float32", "uint8", ...); -1 when unknown.
int element_type_slot(const std::string& type);

Graph program_graph(const ProgramInfo& p, Collection collection);
// Runtimes may be empty (candidates not measured yet): the graph then has zero runtimes.
Graph layout_graph(const ProgramInfo& p, const std::vector<Schedule>& schedules,
                   const std::vector<int64_t>& runtime_ns);
Graph tile_graph(const ProgramInfo& p, const std::vector<Schedule>& schedules,
                 const std::vector<int64_t>& runtime_ns, int64_t normalizer_ns);

}  // namespace tcost::halide
